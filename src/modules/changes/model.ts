import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { EpochMs } from '../../platform/schemas.ts'
import { Account } from '../accounts/model.ts'
import { BudgetPlan } from '../budgets/model.ts'
import { Category } from '../categories/model.ts'
import { ImportPreset } from '../imports/preset-model.ts'
import { Payee } from '../payees/model.ts'
import { Rule } from '../rules/model.ts'
import { Schedule } from '../schedules/model.ts'
import { Tag } from '../tags/model.ts'
import { Transaction } from '../transactions/model.ts'

/** The change feed's shapes (CONTRACT §15). */

export const FEED_RESOURCES = ['accounts', 'categories', 'payees', 'transactions', 'tags', 'rules', 'budgets', 'import_presets', 'schedules'] as const
export type FeedResource = (typeof FEED_RESOURCES)[number]
/** A resource's name in a Change (`resource` is singular, like the objects it carries). */
export const ENTITY_OF = {
  accounts: 'account',
  categories: 'category',
  payees: 'payee',
  transactions: 'transaction',
  tags: 'tag',
  rules: 'rule',
  budgets: 'budget',
  import_presets: 'import_preset',
  schedules: 'schedule',
} as const

const RESOURCE_LIST = `(${FEED_RESOURCES.join('|')})`

export const Change = t.Object(
  {
    seq: Type.Integer({ minimum: 1, description: 'position in the owner’s feed; grows with every change' }),
    resource: t.Union([
      t.Literal('account'),
      t.Literal('category'),
      t.Literal('payee'),
      t.Literal('transaction'),
      t.Literal('tag'),
      t.Literal('rule'),
      t.Literal('budget'),
      t.Literal('import_preset'),
      t.Literal('schedule'),
    ]),
    id: t.String({ description: 'the entity’s id; for a budget, its month (YYYY-MM)' }),
    op: t.Union([t.Literal('upsert'), t.Literal('delete')], {
      description: '`delete` is the tombstone of a deleted transaction, rule, import preset or schedule',
    }),
    changedAt: EpochMs,
    externalId: t.Union([t.String(), t.Null()]),
    data: t.Union([Account, Category, Payee, Transaction, Tag, Rule, BudgetPlan, ImportPreset, Schedule, t.Null()], {
      description: 'the object as it is now (`upsert`), or null (`delete`); a budget’s is its plan (BudgetPlan)',
    }),
  },
  { title: 'Change', additionalProperties: false },
)

export const ChangesQuery = t.Object(
  {
    cursor: t.Optional(t.String({ minLength: 1, maxLength: 500, description: 'a previous page’s nextCursor; absent = from the beginning' })),
    limit: t.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100, description: 'page size, 1–500 (default 100)' })),
    resources: t.Optional(
      t.String({
        pattern: `^${RESOURCE_LIST}(,${RESOURCE_LIST})*$`,
        description: `comma list of ${FEED_RESOURCES.join(', ')}; default: every kind the key may read`,
        examples: ['accounts,transactions'],
      }),
    ),
  },
  { additionalProperties: false },
)

export const ChangesResponse = t.Object(
  {
    data: t.Array(Change),
    nextCursor: t.String({ description: 'where to resume; never null' }),
    hasMore: t.Boolean({ description: 'whether to call again now' }),
  },
  { title: 'ChangesResponse', additionalProperties: false },
)

export type ChangeOut = typeof Change.static
export type ChangesInput = typeof ChangesQuery.static
