import type { Tenant } from '../../db/tenant/tenant.ts'
import { moneyJson } from '../../platform/money.ts'
import { ancestorIds, loadCategoryTree } from '../categories/queries.ts'
import { MAX_REPORT_GROUPS, type SpendingGroupOut, type SpendingReportInput } from './model.ts'
import { joinHalves, payeeNames, spendingRows } from './queries.ts'

/**
 * `GET /v1/reports/spending` (CONTRACT §26): what went out and came in over a date range, by
 * category, payee or month, per currency, exact. Transfers move money between the owner's own
 * accounts and are left out; a split transaction counts by its legs.
 */

interface Group {
  out: SpendingGroupOut
  spent: bigint
  received: bigint
}

export function spendingReport(tenant: Tenant, query: SpendingReportInput) {
  const { groupBy, from, to, accountId } = query
  const limit = query.limit ?? MAX_REPORT_GROUPS
  // One snapshot: the sums and the names they are shown with.
  const groups = tenant.read(() => {
    const rows = spendingRows(tenant, groupBy, from, to, accountId)
    const nameOf = namer(
      tenant,
      groupBy,
      rows.map(([key]) => key).filter((key): key is string => key !== null),
    )
    return rows.map(([key, currency, spentWhole, spentRest, negativeWhole, negativeRest, count]): Group => {
      const spent = joinHalves(spentWhole, spentRest)
      const received = -joinHalves(negativeWhole, negativeRest)
      return {
        spent,
        received,
        out: {
          key,
          name: key === null ? null : nameOf(key),
          currency,
          spent: moneyJson(spent),
          received: moneyJson(received),
          net: moneyJson(spent - received),
          transactionCount: Number(count),
        },
      }
    })
  })
  groups.sort(groupBy === 'month' ? chronological : largestFirst)
  return {
    data: {
      groupBy,
      from,
      to,
      accountId: accountId ?? null,
      groups: groups.slice(0, limit).map((group) => group.out),
      omittedGroups: Math.max(0, groups.length - limit),
    },
  }
}

function namer(tenant: Tenant, groupBy: SpendingReportInput['groupBy'], keys: string[]): (key: string) => string | null {
  if (groupBy === 'month') return () => null
  if (groupBy === 'payee') {
    const names = payeeNames(tenant, keys)
    return (key) => names.get(key) ?? null
  }
  const tree = loadCategoryTree(tenant)
  return (key) => {
    const own = tree.get(key)
    if (!own) return null
    return [
      ...ancestorIds(tree, key)
        .map((id) => tree.get(id)?.name ?? '')
        .reverse(),
      own.name,
    ].join(' / ')
  }
}

const byCurrency = (a: Group, b: Group) => (a.out.currency < b.out.currency ? -1 : a.out.currency > b.out.currency ? 1 : 0)
/** The null key (no category, no payee) sorts after every key. */
const byKey = (a: Group, b: Group) => (a.out.key === b.out.key ? 0 : a.out.key === null ? 1 : b.out.key === null ? -1 : a.out.key < b.out.key ? -1 : 1)
const chronological = (a: Group, b: Group) => byCurrency(a, b) || byKey(a, b)
const largestFirst = (a: Group, b: Group) =>
  byCurrency(a, b) || (a.spent !== b.spent ? (a.spent > b.spent ? -1 : 1) : a.received !== b.received ? (a.received > b.received ? -1 : 1) : byKey(a, b))
