import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import {
  BooleanQuery,
  Cursor,
  EpochMs,
  UpdatedAt,
  ExternalId,
  Id,
  Limit,
  ListOf,
  Name,
  Nullable,
  PathId,
  ShortText,
  SingleOf,
  UpsertOf,
} from '../../platform/schemas.ts'

/** Tags (CONTRACT §22): labels on transactions, unique per owner by normalized name. */

export const Tag = t.Object(
  {
    id: Id('tag', 'tag_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b'),
    externalId: Nullable(t.String()),
    name: t.String(),
    color: Nullable(t.String()),
    isArchived: t.Boolean({ description: 'archived tags stay on the transactions that have them, but cannot be given to others' }),
    transactionCount: Type.Integer({ minimum: 0, description: 'the transactions that carry the tag' }),
    createdAt: EpochMs,
    updatedAt: UpdatedAt,
  },
  { title: 'Tag', additionalProperties: false },
)

const Restore = t.Boolean({ description: 'false restores an archived tag; true archives it' })

export const TagCreate = t.Object(
  { name: Name, externalId: t.Optional(ExternalId), color: t.Optional(ShortText) },
  { title: 'TagCreate', additionalProperties: false },
)

export const TagUpsert = t.Object(
  { externalId: ExternalId, name: Name, color: t.Optional(Nullable(ShortText)), isArchived: t.Optional(Restore) },
  { title: 'TagUpsert', additionalProperties: false },
)

export const TagUpdate = t.Object(
  { externalId: t.Optional(Nullable(ExternalId)), name: t.Optional(Name), color: t.Optional(Nullable(ShortText)), isArchived: t.Optional(Restore) },
  { title: 'TagUpdate', additionalProperties: false },
)

export const TagListQuery = t.Object(
  { limit: t.Optional(Limit), cursor: t.Optional(Cursor), includeArchived: t.Optional(BooleanQuery('include archived tags')) },
  { additionalProperties: false },
)

export const TagParams = PathId('tagId')
export const TagResponse = SingleOf(Tag, 'TagResponse')
export const TagListResponse = ListOf(Tag, 'TagListResponse')
export const TagUpsertResponse = UpsertOf(Tag, 'TagUpsertResponse')

export type TagOut = typeof Tag.static
export type TagUpdateInput = typeof TagUpdate.static
