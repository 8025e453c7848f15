import type { Owner } from '../../db/control/store.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { ApiError, invalidReference, ruleViolation } from '../../platform/errors.ts'
import { moneyJson, readMoney, type Units } from '../../platform/money.ts'
import { trimmed } from '../../platform/schemas.ts'
import { findCategory, isVisibleTo } from '../categories/queries.ts'
import {
  type BudgetCategoryInput,
  type BudgetMonthInput,
  type BudgetOut,
  type BudgetPlanOut,
  type BudgetSummaryOut,
  MAX_SUMMARY_MONTHS,
  MONTH_PATTERN,
} from './model.ts'
import {
  accountCurrencies,
  type CategoryNode,
  categoryNodes,
  dropLine,
  monthActivity,
  monthCurrency,
  type PlanLine,
  planLines,
  putLine,
  setMonthCurrency,
} from './queries.ts'

/**
 * Budgets (CONTRACT §27). A month's plan is stored (`budgets`, `budget_lines`); what was spent
 * is summed from the month's transactions on every read, so it can never drift from them.
 */

const MONTH = new RegExp(MONTH_PATTERN)

/** The owner as a budget needs it: the currency plans are made in, and the country that decides which system categories they may use. */
export type BudgetOwner = Pick<Owner, 'defaultCurrency' | 'country'>

/** A month in a path: checked strictly, as a query parameter would be (CONTRACT §27). */
export function assertMonth(month: string, what = "path parameter 'month'"): void {
  if (!MONTH.test(month)) throw new ApiError('validation_failed', `${what} must be a calendar month, YYYY-MM (such as 2026-11)`)
}

/** The current month, in UTC (pfin's dates are calendar dates, without time zones). */
export const currentMonth = (now = Date.now()): string => new Date(now).toISOString().slice(0, 7)

function requireCurrency(owner: BudgetOwner): string {
  if (owner.defaultCurrency === null) {
    throw ruleViolation("budgets are planned in the owner's defaultCurrency, and none is set: the operator sets it with `owner update --currency`")
  }
  return owner.defaultCurrency
}

/**
 * The currency a month is shown in: the one its planned amounts were made in, or for a month
 * with none, the owner's defaultCurrency; null when neither exists.
 */
function shownCurrency(tenant: Tenant, month: string, lines: readonly PlanLine[], owner: BudgetOwner): string | null {
  const stored = monthCurrency(tenant, month)
  if (stored !== undefined && lines.length > 0) return stored
  return owner.defaultCurrency ?? stored ?? null
}

// ── the plan ────────────────────────────────────────────────────────────────

const planOut = (month: string, currency: string, lines: readonly PlanLine[]): BudgetPlanOut => ({
  month,
  currency,
  categories: lines.map((line) => ({ categoryId: line.categoryId, planned: moneyJson(line.planned), note: line.note })),
})

/** A month's plan as stored; null for a month that was never planned and has no currency to show. */
export function getPlan(tenant: Tenant, month: string, owner: BudgetOwner): BudgetPlanOut | null {
  const lines = planLines(tenant, month)
  const currency = shownCurrency(tenant, month, lines, owner)
  return currency === null ? null : planOut(month, currency, lines)
}

/**
 * A category a plan may name: the owner's, or a system one meant for them; else
 * invalid_reference naming `field`. Read from its row, not from `categoryNodes`: inside a write
 * group an earlier write of the same transaction may have just made or archived it.
 */
function plannable(tenant: Tenant, owner: BudgetOwner, id: string, field: string): { id: string; isArchived: boolean } {
  const row = findCategory(tenant, id)
  if (!row || !isVisibleTo(row, owner.country)) throw invalidReference(field, id)
  return { id, isArchived: row.isArchived }
}

/**
 * Writes `target` as the month's plan in `currency`, touching only what differs, so a write
 * that changes nothing stored leaves the change feed where it was. A month with no planned
 * amount is not made.
 */
function store(tenant: Tenant, month: string, currency: string, current: readonly PlanLine[], target: ReadonlyMap<string, PlanLine>): void {
  const stored = monthCurrency(tenant, month)
  if (target.size > 0 && stored !== currency) setMonthCurrency(tenant, month, currency, stored !== undefined)
  const before = new Map(current.map((line) => [line.categoryId, line]))
  for (const line of current) if (!target.has(line.categoryId)) dropLine(tenant, month, line.categoryId)
  for (const line of target.values()) {
    const old = before.get(line.categoryId)
    if (!old || old.planned !== line.planned || old.note !== line.note) putLine(tenant, month, line)
  }
}

/**
 * An archived category takes no new planned amount: naming one is refused unless it keeps the
 * amount it already has in the same currency (a whole month sent back as it was read), or
 * removes it (planned 0).
 */
function assertPlannable(
  category: { id: string; isArchived: boolean },
  line: PlanLine,
  current: PlanLine | undefined,
  sameCurrency: boolean,
  field: string,
): void {
  if (!category.isArchived || line.planned === 0n) return
  if (current && sameCurrency && current.planned === line.planned) return
  throw ruleViolation(`${field}: category ${JSON.stringify(category.id)} is archived and cannot be given a planned amount (planned 0 removes one)`)
}

/** `PUT /v1/budgets/{month}/categories/{categoryId}`: sets, replaces or (planned 0) removes one planned amount. */
export function setCategoryPlan(tenant: Tenant, owner: BudgetOwner, month: string, categoryId: string, body: BudgetCategoryInput): BudgetPlanOut {
  assertMonth(month)
  const planned = readMoney(body, 'planned')
  const currency = requireCurrency(owner)
  return tenant.write(() => {
    const category = plannable(tenant, owner, categoryId, 'categoryId')
    const current = planLines(tenant, month)
    const stored = monthCurrency(tenant, month)
    const others = current.filter((line) => line.categoryId !== categoryId)
    // The month's other amounts are in its currency: one amount in another would make the sums
    // meaningless. Removing one is fine, and leaves the rest as they are.
    const kept = stored !== undefined && others.length > 0 ? stored : currency
    if (kept !== currency && planned !== 0n) {
      throw ruleViolation(
        `${month} is planned in ${kept} and the owner's defaultCurrency is now ${currency}: set the whole month (PUT /v1/budgets/${month}) to plan it in ${currency}`,
      )
    }
    const line: PlanLine = { categoryId, planned, note: planned === 0n ? null : trimmed(body.note) }
    assertPlannable(
      category,
      line,
      current.find((old) => old.categoryId === categoryId),
      stored === currency,
      'categoryId',
    )
    const target = new Map(others.map((old) => [old.categoryId, old]))
    if (planned !== 0n) target.set(categoryId, line)
    store(tenant, month, kept, current, target)
    const after = planLines(tenant, month)
    return planOut(month, after.length > 0 ? kept : currency, after)
  })
}

/**
 * `PUT /v1/budgets/{month}`: the month's whole plan at once. With `copyFrom`, that month's plan
 * is copied first (its archived categories left out) and `categories` then replace or remove
 * the entries they name; without it, the month holds exactly `categories`.
 */
export function setMonthPlan(tenant: Tenant, owner: BudgetOwner, month: string, body: BudgetMonthInput): BudgetPlanOut {
  assertMonth(month)
  // Every amount's digits first: they are a field's shape (validation_failed), read after the schema check.
  const amounts = body.categories.map((entry, i) => readMoney(entry, 'planned', `categories[${i}].planned`))
  const currency = requireCurrency(owner)
  return tenant.write(() => {
    const seen = new Set<string>()
    const entries = body.categories.map((entry, i) => {
      const field = `categories[${i}].categoryId`
      if (seen.has(entry.categoryId)) throw ruleViolation(`${field}: category ${JSON.stringify(entry.categoryId)} is named more than once`)
      seen.add(entry.categoryId)
      const category = plannable(tenant, owner, entry.categoryId, field)
      const planned = amounts[i] as Units
      return { field, category, line: { categoryId: entry.categoryId, planned, note: planned === 0n ? null : trimmed(entry.note) } }
    })
    const current = planLines(tenant, month)
    const sameCurrency = monthCurrency(tenant, month) === currency
    const target = new Map<string, PlanLine>()
    if (body.copyFrom !== undefined) for (const line of copiedLines(tenant, body.copyFrom, currency)) target.set(line.categoryId, line)
    const before = new Map(current.map((line) => [line.categoryId, line]))
    for (const { field, category, line } of entries) {
      assertPlannable(category, line, before.get(line.categoryId), sameCurrency, field)
      if (line.planned === 0n) target.delete(line.categoryId)
      else target.set(line.categoryId, line)
    }
    store(tenant, month, currency, current, target)
    return planOut(month, currency, planLines(tenant, month))
  })
}

/** The plan of `from` to copy into a month planned in `currency`: refused when it has none, or is in another currency. */
function copiedLines(tenant: Tenant, from: string, currency: string): PlanLine[] {
  const lines = planLines(tenant, from)
  if (lines.length === 0) throw ruleViolation(`copyFrom: ${from} has no planned amounts to copy`)
  const source = monthCurrency(tenant, from)
  if (source !== currency) {
    throw ruleViolation(`copyFrom: ${from} is planned in ${source}, not in the owner's defaultCurrency ${currency}; amounts are never converted`)
  }
  return lines.filter((line) => findCategory(tenant, line.categoryId)?.isArchived !== true)
}

// ── what was spent ──────────────────────────────────────────────────────────

/** Sums by currency, with the transactions behind each. */
class Activity {
  readonly byCurrency = new Map<string, { spent: Units; count: number }>()
  add(currency: string, amount: Units, count: number): void {
    const entry = this.byCurrency.get(currency)
    if (entry) {
      entry.spent += amount
      entry.count += count
    } else this.byCurrency.set(currency, { spent: amount, count })
  }
  in(currency: string): { spent: Units; count: number } {
    return this.byCurrency.get(currency) ?? { spent: 0n, count: 0 }
  }
  others(currency: string): { currency: string; spent: number }[] {
    return [...this.byCurrency]
      .filter(([code, entry]) => code !== currency && entry.count > 0)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([code, entry]) => ({ currency: code, spent: moneyJson(entry.spent) }))
  }
}

interface MonthFigures {
  /** Per category, rolled up: its own activity and that of every category below it. */
  rolled: Map<string, Activity>
  /** Per category, its own activity only (the totals count each transaction once). */
  own: Map<string, Activity>
  uncategorized: Activity
}

/** A category and its ancestors, nearest first (a cycle cannot be stored, but is not followed twice). */
function lineage(nodes: ReadonlyMap<string, CategoryNode>, id: string): string[] {
  const chain: string[] = []
  for (let at: string | null = id; at !== null && !chain.includes(at); at = nodes.get(at)?.parentId ?? null) chain.push(at)
  return chain
}

const activityOf = (map: Map<string, Activity>, id: string): Activity => {
  let activity = map.get(id)
  if (!activity) {
    activity = new Activity()
    map.set(id, activity)
  }
  return activity
}

/** A month's activity by category and currency, from one pass over its rows (`monthActivity`). */
function figures(tenant: Tenant, month: string): MonthFigures {
  const nodes = categoryNodes(tenant)
  const currencies = accountCurrencies(tenant)
  const result: MonthFigures = { rolled: new Map(), own: new Map(), uncategorized: new Activity() }
  // A split transaction counts once per category it reaches, however many of its legs do.
  const counted = new Map<string, Set<string>>()
  for (const row of monthActivity(tenant, month)) {
    const currency = currencies.get(row.accountId) as string
    if (row.categoryId === null) {
      const once = row.splitOf === null ? row.count : firstTime(counted, row.splitOf, '')
      result.uncategorized.add(currency, row.amount, once)
      continue
    }
    const chain = lineage(nodes, row.categoryId)
    activityOf(result.own, row.categoryId).add(currency, row.amount, row.splitOf === null ? row.count : 0)
    for (const id of chain) {
      const once = row.splitOf === null ? row.count : firstTime(counted, row.splitOf, id)
      activityOf(result.rolled, id).add(currency, row.amount, once)
    }
  }
  return result
}

/** 1 the first time a transaction reaches `key`, then 0. */
function firstTime(counted: Map<string, Set<string>>, transactionId: string, key: string): number {
  let reached = counted.get(transactionId)
  if (!reached) {
    reached = new Set()
    counted.set(transactionId, reached)
  }
  if (reached.has(key)) return 0
  reached.add(key)
  return 1
}

function totalsOf(nodes: ReadonlyMap<string, CategoryNode>, lines: readonly PlanLine[], own: Map<string, Activity>, currency: string) {
  const planned = new Set(lines.map((line) => line.categoryId))
  let plannedExpense = 0n
  let plannedIncome = 0n
  for (const line of lines) {
    // A plan inside a planned ancestor is part of the ancestor's: counted there, once.
    if (
      lineage(nodes, line.categoryId)
        .slice(1)
        .some((id) => planned.has(id))
    )
      continue
    if (nodes.get(line.categoryId)?.type === 'income') plannedIncome += line.planned
    else plannedExpense += line.planned
  }
  let spentExpense = 0n
  let receivedIncome = 0n
  for (const [id, activity] of own) {
    const spent = activity.in(currency).spent
    if (nodes.get(id)?.type === 'income') receivedIncome += spent
    else spentExpense += spent
  }
  return {
    plannedExpense: moneyJson(plannedExpense),
    spentExpense: moneyJson(spentExpense),
    plannedIncome: moneyJson(plannedIncome),
    receivedIncome: moneyJson(receivedIncome),
  }
}

function uncategorizedOf(activity: Activity, currency: string) {
  const { spent, count } = activity.in(currency)
  return { spent: moneyJson(spent), transactionCount: count, otherCurrencies: activity.others(currency) }
}

/** The currency of a month about to be read, or the 422 that says why there is none. */
function readableMonth(tenant: Tenant, month: string, owner: BudgetOwner): { lines: PlanLine[]; currency: string } {
  const lines = planLines(tenant, month)
  const currency = shownCurrency(tenant, month, lines, owner)
  if (currency === null) requireCurrency(owner)
  return { lines, currency: currency as string }
}

/** `GET /v1/budgets/{month}`: the plan against what was spent, category by category. */
export function getBudget(tenant: Tenant, owner: BudgetOwner, month: string, includeUnplanned: boolean): BudgetOut {
  assertMonth(month)
  return tenant.read(() => budgetOf(tenant, owner, month, includeUnplanned))
}

/** The month's budget, or null when it has no currency to be shown in (the agent context's, read in its snapshot). */
export function budgetOrNull(tenant: Tenant, owner: BudgetOwner, month: string): BudgetOut | null {
  if (owner.defaultCurrency === null && shownCurrency(tenant, month, planLines(tenant, month), owner) === null) return null
  return budgetOf(tenant, owner, month, false)
}

/** The month's budget; call inside `tenant.read`. */
export function budgetOf(tenant: Tenant, owner: BudgetOwner, month: string, includeUnplanned: boolean): BudgetOut {
  const { lines, currency } = readableMonth(tenant, month, owner)
  const nodes = categoryNodes(tenant)
  const { rolled, own, uncategorized } = figures(tenant, month)
  const plans = new Map(lines.map((line) => [line.categoryId, line]))
  const shown = new Set(plans.keys())
  if (includeUnplanned) for (const [id, activity] of rolled) if ([...activity.byCurrency.values()].some((entry) => entry.count > 0)) shown.add(id)
  const categories = [...shown]
    .sort((a, b) => (nodes.get(a)?.rank ?? 0) - (nodes.get(b)?.rank ?? 0))
    .map((id) => {
      const node = nodes.get(id)
      const plan = plans.get(id)
      const planned = plan?.planned ?? 0n
      const activity = rolled.get(id) ?? new Activity()
      const { spent, count } = activity.in(currency)
      return {
        categoryId: id,
        categoryType: node?.type ?? null,
        parentId: node?.parentId ?? null,
        planned: moneyJson(planned),
        spent: moneyJson(spent),
        remaining: moneyJson(planned - spent),
        transactionCount: count,
        otherCurrencies: activity.others(currency),
        note: plan?.note ?? null,
      }
    })
  return { month, currency, categories, totals: totalsOf(nodes, lines, own, currency), uncategorized: uncategorizedOf(uncategorized, currency) }
}

/** The months from `from` to `to`, inclusive. */
function monthsBetween(from: string, to: string): string[] {
  const index = (month: string) => Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7)) - 1
  const months: string[] = []
  for (let i = index(from); i <= index(to); i++) months.push(`${String(Math.floor(i / 12)).padStart(4, '0')}-${String((i % 12) + 1).padStart(2, '0')}`)
  return months
}

/** `GET /v1/budgets?from&to`: each month's totals, for charts. */
export function budgetSummaries(tenant: Tenant, owner: BudgetOwner, from: string, to: string): BudgetSummaryOut[] {
  if (from > to) throw new ApiError('validation_failed', `query parameter 'to' must not be before 'from' (${from})`)
  const months = monthsBetween(from, to)
  if (months.length > MAX_SUMMARY_MONTHS) {
    throw new ApiError('validation_failed', `query parameters 'from' and 'to' span ${months.length} months; at most ${MAX_SUMMARY_MONTHS} at once`)
  }
  return tenant.read(() =>
    months.map((month) => {
      const { lines, currency } = readableMonth(tenant, month, owner)
      const { own, uncategorized } = figures(tenant, month)
      return { month, currency, totals: totalsOf(categoryNodes(tenant), lines, own, currency), uncategorized: uncategorizedOf(uncategorized, currency) }
    }),
  )
}
