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
 * One rule over the stored transactions of a date range (CONTRACT §23). `rules test` and
 * `rules apply` run the same code: test inside a savepoint it rolls back, so what it shows is
 * what apply writes. Each change is an ordinary transaction update (its references checked, its
 * effect on balances, payee totals and tag counts summed and written once, its feed entry made by
 * the triggers), all in the request's one database transaction: a run is applied whole or not at all.
 */

interface Run {
  scanned: number
  matched: number
  changed: number
  transactionIds: string[]
  /** Before and after of the first changes, when asked for. */
  shown: { before: TransactionOut; after: TransactionOut }[]
}

const view = (tenant: Tenant, id: string) => toTransaction(findTransactionView(tenant, id) as NonNullable<ReturnType<typeof findTransactionView>>)

function run(tenant: Tenant, country: string | null, rule: RuleRow, range: RuleApplyInput, show: number): Run {
  if (range.from > range.to) throw ruleViolation(`to: ${range.to} is before from (${range.from}); the range is inclusive and runs from → to`)
  if (range.accountId !== undefined && !findAccount(tenant, range.accountId)) throw invalidReference('accountId', range.accountId)
  const rows = transactionsInRange(tenant, { from: range.from, to: range.to, accountId: range.accountId, limit: MAX_RUN_TRANSACTIONS + 1 })
  if (rows.length > MAX_RUN_TRANSACTIONS) {
    throw ruleViolation(
      `from/to: the range holds more than ${MAX_RUN_TRANSACTIONS.toLocaleString('en')} transactions, the most one run reads; narrow it (or name an accountId) and run each part`,
    )
  }
  const rules = [compileRule(rule)]
  const refs = new References(tenant, country)
  const effects = new Effects()
  const result: Run = { scanned: rows.length, matched: 0, changed: 0, transactionIds: [], shown: [] }
  for (const row of rows) {
    const ruled = withRules(refs, rules, {}, row, { overwrite: range.overwrite ?? false })
    if (ruled.applied.length === 0) continue
    result.matched++
    if (Object.keys(ruled.body).length === 0) continue
    const before = result.shown.length < show ? view(tenant, row.id) : undefined
    const seq = lastSeq(tenant)
    updateTransaction(tenant, country, row.id, ruled.body, { refs, effects }, row)
    // A change the feed did not record changed nothing: the transaction already held what the rule sets.
    if (lastSeq(tenant) === seq) continue
    result.changed++
    result.transactionIds.push(row.id)
    if (before) result.shown.push({ before, after: view(tenant, row.id) })
  }
  effects.apply(tenant)
  return result
}

/** `POST /v1/rules/test`: what `apply` would change, computed by applying it in a savepoint that is then rolled back. */
export function testRule(tenant: Tenant, country: string | null, body: RuleTestInput) {
  if ((body.rule === undefined) === (body.ruleId === undefined)) throw ruleViolation('Send rule (a rule to try) or ruleId (a saved one), one of the two')
  return tenant.write(() => {
    const rule = body.rule ? draftRule(tenant, country, { ...body.rule, name: body.rule.name ?? 'draft' }) : getRule(tenant, body.ruleId as string)
    tenant.sqlite.run('SAVEPOINT rule_test')
    try {
      const { scanned, matched, changed, shown } = run(tenant, country, rule, body, body.limit ?? 50)
      return { data: shown, summary: { scanned, matched, changed } }
    } finally {
      tenant.sqlite.run('ROLLBACK TO rule_test')
      tenant.sqlite.run('RELEASE rule_test')
    }
  })
}

/** `POST /v1/rules/{id}/apply`: the rule's changes to the range, written together. */
export function applyRule(tenant: Tenant, country: string | null, id: string, body: RuleApplyInput) {
  return tenant.write(() => {
    const rule = getRule(tenant, id)
    const { scanned, matched, changed, transactionIds } = run(tenant, country, rule, body, 0)
    return { data: { ruleId: rule.id, scanned, matched, changed, transactionIds } }
  })
}
