import type { Tenant } from '../../db/tenant/tenant.ts'
import { ApiError } from '../../platform/errors.ts'
import { readMoney } from '../../platform/money.ts'
import { withoutKeys } from '../../platform/number-sources.ts'
import { trimmed } from '../../platform/schemas.ts'
import { type CompiledRule, compileRule, type Facts, runRules } from '../rules/engine.ts'
import type { ActionField } from '../rules/model.ts'
import { activeRuleRows } from '../rules/queries.ts'
import { MAX_TAGS_PER_TRANSACTION, type TransactionWriteInput } from './model.ts'
import type { TransactionRow } from './queries.ts'
import type { References } from './references.ts'
import { tagIdsOf } from './tag-queries.ts'

/**
 * Rules on a transaction write (CONTRACT §23): the owner's active rules run over what the
 * transaction will be, and what they fill in becomes part of the request body, before the body's
 * references are checked: a category a rule sets is checked exactly as a category sent.
 */

/** The owner's active rules in run order, compiled: read with one prepared query per request (or per batch) that asks for them. */
export const loadRules = (tenant: Tenant): CompiledRule[] => activeRuleRows(tenant).map(compileRule)

/**
 * Values an importer proposes for a field without insisting on them (the bank's text as the
 * payee): a rule that sets the field wins, and a field the request or the stored transaction
 * holds is kept, as for a rule.
 */
export interface RuleFallback {
  payeeName?: string
  note?: string
}

export interface RuleOptions {
  /**
   * `false` (writes, and rules apply with `overwrite: false`): a field the stored transaction
   * holds is kept, so a re-import never undoes what the user set since. `true` (rules apply with
   * `overwrite: true`): the rules replace stored values; tags are still only added.
   */
  overwrite?: boolean
  fallback?: RuleFallback
}

export interface Ruled {
  body: TransactionWriteInput
  applied: string[]
}

/** The request's money, or null when it is not a money value: the write refuses it then, with its usual error. */
function amountOf(body: TransactionWriteInput): bigint | null {
  try {
    return readMoney(body, 'amount')
  } catch (error) {
    if (error instanceof ApiError) return null
    throw error
  }
}

/**
 * The fields a rule may write: never one the request sent (`categoryId: null` included), nor a
 * split transaction's category (its legs hold the categories); with a stored transaction and
 * without `overwrite`, only the fields it leaves empty.
 */
function freeFields(body: TransactionWriteInput, stored: TransactionRow | undefined, overwrite: boolean): Set<ActionField> {
  const kept = (holds: boolean) => !overwrite && holds
  const split = body.splits !== undefined ? body.splits.length > 0 : (stored?.hasSplits ?? false)
  const free = new Set<ActionField>()
  if (body.categoryId === undefined && !split && !kept(stored?.categoryId != null)) free.add('categoryId')
  if (body.payeeId === undefined && body.payeeName === undefined && !kept(stored?.payeeId != null)) free.add('payeeName')
  if (body.note === undefined && !kept(stored?.note != null)) free.add('note')
  if (body.tagIds === undefined && body.tagNames === undefined && !kept(stored?.hasTags ?? false)) free.add('tagNames')
  return free
}

/** What conditions read: the transaction as this write would leave it before any rule ran. */
function factsOf(refs: References, body: TransactionWriteInput, stored: TransactionRow | undefined, fallback: RuleFallback | undefined): Facts {
  let payeeName: string | null = null
  if (body.payeeName !== undefined) payeeName = refs.payeeShownAs(body.payeeName)
  else if (body.payeeId !== undefined) payeeName = body.payeeId === null ? null : (refs.payee(body.payeeId)?.name ?? null)
  else if (stored?.payeeId) payeeName = refs.payee(stored.payeeId)?.name ?? null
  else if (fallback?.payeeName !== undefined) payeeName = refs.payeeShownAs(fallback.payeeName)
  let note: string | null
  if (body.note !== undefined) note = trimmed(body.note)
  else note = stored?.note ?? trimmed(fallback?.note)
  return {
    originalDescription: body.originalDescription !== undefined ? trimmed(body.originalDescription) : (stored?.originalDescription ?? null),
    payeeName,
    note,
    amount: body.amount !== undefined ? amountOf(body) : (stored?.amount ?? null),
    accountId: body.accountId ?? stored?.accountId ?? '',
  }
}

/**
 * `body` with what `rules` (and a fallback) fill in, for a create (`stored` undefined) or for a
 * write to `stored`. The body is copied with its numbers' source texts, so its money stays exact.
 * A tag a rule adds that has been archived since the rule was saved is left out: a rule never
 * makes a write fail that would pass without it.
 */
export function withRules(
  refs: References,
  rules: readonly CompiledRule[],
  body: TransactionWriteInput & { applyRules?: boolean },
  stored?: TransactionRow,
  options: RuleOptions = {},
): Ruled {
  const free = freeFields(body, stored, options.overwrite ?? false)
  const outcome = runRules(rules, factsOf(refs, body, stored, options.fallback), free, (name) => refs.payeeShownAs(name))
  const out = withoutKeys(body, new Set(['applyRules'])) as TransactionWriteInput
  const fallback = options.fallback
  const payeeName = outcome.payeeName ?? (free.has('payeeName') ? fallback?.payeeName : undefined)
  if (payeeName !== undefined) out.payeeName = payeeName
  const note = outcome.note ?? (free.has('note') ? fallback?.note : undefined)
  if (note !== undefined) out.note = note
  if (outcome.categoryId !== undefined) out.categoryId = outcome.categoryId
  const tagNames = outcome.tagNames.filter((name) => !refs.existingTag(name)?.isArchived)
  if (tagNames.length > 0) {
    // Tags are added: with `overwrite` a stored transaction keeps the tags it has. The 20 a transaction may carry are the first 20.
    const storedTags = stored?.hasTags ? (tagIdsOf(refs.tenant, [stored.id]).get(stored.id) ?? []) : []
    const room = MAX_TAGS_PER_TRANSACTION - storedTags.length
    const added = tagNames.slice(0, Math.max(room, 0))
    if (storedTags.length === 0) out.tagNames = added
    else if (added.length > 0) out.tagIds = [...storedTags, ...added.map((name, index) => refs.tagNamed(name, `tagNames[${index}]`).id)]
  }
  return { body: out, applied: outcome.applied }
}
