import { lastSeq } from '../../db/tenant/change-log.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { invalidReference, ruleViolation } from '../../platform/errors.ts'
import { findAccount } from '../accounts/queries.ts'
import { compileRule } from '../rules/engine.ts'
import type { RuleRow } from '../rules/queries.ts'
import { draftRule, getRule } from '../rules/service.ts'
import { Effects } from '../transactions/effects.ts'
import type { TransactionOut } from '../transactions/model.ts'
import { findTransactionView, toTransaction, transactionsInRange } from '../transactions/queries.ts'
import { References } from '../transactions/references.ts'
import { withRules } from '../transactions/rules.ts'
import { updateTransaction } from '../transactions/service.ts'
import { MAX_RUN_TRANSACTIONS, type RuleApplyInput, type RuleTestInput } from './model.ts'

/**
 * One rule over the stored transactions of a date range (CONTRACT §23). `rules apply` makes each
 * change as an ordinary transaction update (its references checked, its effect on balances,
 * payee totals and tag counts summed and written once, its feed entry made by the triggers), all
 * in the request's one database transaction: a run is applied whole or not at all. `rules test`
 * makes each change the same way and undoes it at once, so what it shows is what apply writes.
 *
 * Both routes commit alone (RouteDef.alone) and the test undoes each change before the next: the
 * savepoints stay small, because inside one SQLite's in-memory statement journal makes every
 * statement cost as much as the savepoint already holds (5,000 updates in one savepoint: ~15 s).
 */

interface Run {
  scanned: number
  matched: number
  changed: number
  transactionIds: string[]
  /** Before and after of each change, when the run is a test. */
  shown: { before: TransactionOut; after: TransactionOut }[]
  /** A test that stopped at its limit before the end of the range. */
  hasMore: boolean
}

const view = (tenant: Tenant, id: string) => toTransaction(findTransactionView(tenant, id) as NonNullable<ReturnType<typeof findTransactionView>>)

function run(tenant: Tenant, country: string | null, rule: RuleRow, range: RuleApplyInput, test?: { limit: number }): Run {
  if (range.from > range.to) throw ruleViolation(`to: ${range.to} is before from (${range.from}); the range is inclusive and runs from → to`)
  if (range.accountId !== undefined && !findAccount(tenant, range.accountId)) throw invalidReference('accountId', range.accountId)
  const rows = transactionsInRange(tenant, { from: range.from, to: range.to, accountId: range.accountId, limit: MAX_RUN_TRANSACTIONS + 1 })
  if (rows.length > MAX_RUN_TRANSACTIONS) {
    throw ruleViolation(
      `from/to: the range holds more than ${MAX_RUN_TRANSACTIONS.toLocaleString('en')} transactions, the most one run reads; narrow it (or name an accountId) and run each part`,
    )
  }
  tenant.widenCacheForImport()
  const rules = [compileRule(rule)]
  const refs = new References(tenant, country)
  const effects = new Effects()
  const result: Run = { scanned: 0, matched: 0, changed: 0, transactionIds: [], shown: [], hasMore: false }
  const sql = (text: string) => tenant.sqlite.query(text).run()
  for (const row of rows) {
    const ruled = withRules(refs, rules, {}, row, { overwrite: range.overwrite ?? false })
    const candidate = ruled.applied.length > 0 && Object.keys(ruled.body).length > 0
    if (test && candidate && result.changed === test.limit) {
      result.hasMore = true
      break
    }
    result.scanned++
    if (ruled.applied.length > 0) result.matched++
    if (!candidate) continue
    const seq = lastSeq(tenant)
    if (!test) {
      updateTransaction(tenant, country, row.id, ruled.body, { refs, effects }, row)
      // An update the feed did not record changed nothing: the transaction already held what the rule sets.
      if (lastSeq(tenant) === seq) continue
      result.changed++
      result.transactionIds.push(row.id)
      continue
    }
    let after: TransactionOut | undefined
    sql('SAVEPOINT rule_test_row')
    try {
      // Alone, as a PATCH would be: its effect applied (and checked) at once, then undone.
      updateTransaction(tenant, country, row.id, ruled.body, { refs }, row)
      if (lastSeq(tenant) !== seq) after = view(tenant, row.id)
    } finally {
      sql('ROLLBACK TO rule_test_row')
      sql('RELEASE rule_test_row')
      // A payee or tag the change made is gone again.
      if (after) refs.forget()
    }
    if (!after) continue
    result.changed++
    result.transactionIds.push(row.id)
    // Undone: the stored transaction is the one before.
    result.shown.push({ before: view(tenant, row.id), after })
  }
  if (!test) effects.apply(tenant)
  return result
}

/** `POST /v1/rules/test`: what `apply` would change, each change made and undone at once. */
export function testRule(tenant: Tenant, country: string | null, body: RuleTestInput) {
  if ((body.rule === undefined) === (body.ruleId === undefined)) throw ruleViolation('Send rule (a rule to try) or ruleId (a saved one), one of the two')
  return tenant.write(() => {
    const rule = body.rule ? draftRule(tenant, country, { ...body.rule, name: body.rule.name ?? 'draft' }, 'rule') : getRule(tenant, body.ruleId as string)
    const { scanned, matched, changed, shown, hasMore } = run(tenant, country, rule, body, { limit: body.limit ?? 50 })
    return { data: shown, summary: { scanned, matched, changed }, hasMore }
  })
}

/** `POST /v1/rules/{id}/apply`: the rule's changes to the range, written together. */
export function applyRule(tenant: Tenant, country: string | null, id: string, body: RuleApplyInput) {
  return tenant.write(() => {
    const rule = getRule(tenant, id)
    const { scanned, matched, changed, transactionIds } = run(tenant, country, rule, body)
    return { data: { ruleId: rule.id, scanned, matched, changed, transactionIds } }
  })
}
