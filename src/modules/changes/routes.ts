import { changesAfter, type ChangeRow, feedState, lastSeq, purgeTombstones } from '../../db/tenant/change-log.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { ApiError } from '../../platform/errors.ts'
import { defineRoute } from '../../platform/route.ts'
import type { Scope } from '../../platform/scopes.ts'
import { findAccount, toAccount } from '../accounts/queries.ts'
import { type BudgetOwner, getPlan } from '../budgets/service.ts'
import { findCategory } from '../categories/queries.ts'
import { findPreset, toPreset } from '../imports/preset-queries.ts'
import { categoryMapper } from '../categories/service.ts'
import { findPayee, toPayee } from '../payees/queries.ts'
import { findRule, toRule } from '../rules/queries.ts'
import { findSchedule, toSchedule } from '../schedules/queries.ts'
import { findTag, toTag } from '../tags/queries.ts'
import { findTransactionView, toTransaction } from '../transactions/queries.ts'
import { decodeFeedCursor, encodeFeedCursor } from './cursor.ts'
import { type ChangeOut, ChangesQuery, ChangesResponse, ENTITY_OF, FEED_RESOURCES, type FeedResource } from './model.ts'

const READ_SCOPE: Record<FeedResource, Scope> = {
  accounts: 'accounts:read',
  categories: 'categories:read',
  payees: 'payees:read',
  transactions: 'transactions:read',
  // Tags are labels on transactions: whoever reads transactions reads them (CONTRACT §22).
  tags: 'transactions:read',
  // Rules fill in transactions: the same (CONTRACT §23).
  rules: 'transactions:read',
  budgets: 'budgets:read',
  // Import presets are how transactions are read from files: the transaction scopes (CONTRACT §24).
  import_presets: 'transactions:read',
  schedules: 'schedules:read',
}

/** The kinds a request reads: those it names (each must be readable), or every readable one. */
function kindsToRead(scopes: readonly Scope[], named: string | undefined): FeedResource[] {
  const readable = FEED_RESOURCES.filter((kind) => scopes.includes(READ_SCOPE[kind]))
  if (named === undefined) return readable
  const wanted = [...new Set(named.split(','))] as FeedResource[]
  const refused = wanted.filter((kind) => !readable.includes(kind))
  if (refused.length > 0) {
    throw new ApiError(
      'insufficient_scope',
      `resources: this API key lacks ${refused.map((kind) => READ_SCOPE[kind]).join(', ')} to read ${refused.join(', ')}`,
    )
  }
  return wanted
}

/** Each change with its object as it is now; a category's depth and fullName need the tree, read once. */
function withData(tenant: Tenant, owner: BudgetOwner, rows: ChangeRow[]): ChangeOut[] {
  let category: ReturnType<typeof categoryMapper> | undefined
  const out: ChangeOut[] = []
  for (const row of rows) {
    let data: ChangeOut['data'] = null
    if (row.op === 'upsert') {
      if (row.resource === 'account') {
        const found = findAccount(tenant, row.entityId)
        data = found ? toAccount(found) : null
      } else if (row.resource === 'category') {
        const found = findCategory(tenant, row.entityId)
        category ??= categoryMapper(tenant)
        data = found ? category(found) : null
      } else if (row.resource === 'payee') {
        const found = findPayee(tenant, row.entityId)
        data = found ? toPayee(found) : null
      } else if (row.resource === 'tag') {
        const found = findTag(tenant, row.entityId)
        data = found ? toTag(found) : null
      } else if (row.resource === 'rule') {
        const found = findRule(tenant, row.entityId)
        data = found ? toRule(found) : null
      } else if (row.resource === 'budget') {
        data = getPlan(tenant, row.entityId, owner)
      } else if (row.resource === 'schedule') {
        const found = findSchedule(tenant, row.entityId)
        data = found ? toSchedule(found) : null
      } else if (row.resource === 'import_preset') {
        const found = findPreset(tenant, row.entityId)
        data = found ? toPreset(found) : null
      } else {
        const found = findTransactionView(tenant, row.entityId)
        data = found ? toTransaction(found) : null
      }
    }
    out.push({ seq: row.seq, resource: row.resource, id: row.entityId, op: row.op, changedAt: row.changedAt, externalId: row.externalId, data })
  }
  return out
}

export const changeRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/changes',
    operationId: 'listChanges',
    summary: 'What changed since a cursor, deletions included',
    description:
      'Every entity appears once, at its latest change, in `seq` order; an entity changed while you page comes again later. ' +
      'Store `nextCursor` and call again while `hasMore`; later, call with the stored cursor to get what changed since. ' +
      'A 410 `cursor_expired` means the feed can no longer say what changed since that cursor (tombstones purged, or a restore): resync by calling without a cursor. ' +
      'Only the kinds the key may read are returned.',
    tag: 'Sync',
    scopes: ['accounts:read', 'categories:read', 'payees:read', 'transactions:read', 'budgets:read', 'schedules:read'],
    scopesNeeded: 'any',
    query: ChangesQuery,
    response: ChangesResponse,
    statuses: [200],
    errors: ['validation_failed', 'cursor_expired'],
    handle: ({ auth, tenant, query }) => {
      const kinds = kindsToRead(auth.principal.scopes, query.resources).map((kind) => ENTITY_OF[kind])
      const limit = query.limit ?? 100
      purgeTombstones(tenant, Date.now() - tenant.tombstoneRetentionMs)
      const ownerId = auth.subject.id
      const body = tenant.read(() => {
        const state = feedState(tenant)
        const after = query.cursor === undefined ? 0 : decodeFeedCursor(ownerId, state, query.cursor)
        const rows = changesAfter(tenant, after, limit + 1, kinds)
        const hasMore = rows.length > limit
        const page = rows.slice(0, limit)
        // At the end, resume from the newest change of any kind: nothing readable lies between.
        const resumeAt = hasMore ? (page[page.length - 1] as ChangeRow).seq : Math.max(after, lastSeq(tenant))
        return { data: withData(tenant, auth.subject, page), nextCursor: encodeFeedCursor(ownerId, state, resumeAt), hasMore }
      })
      return { status: 200, body }
    },
  }),
]
