import type { ValueError } from '@sinclair/typebox/errors'
import { hasTransactionTombstone, lastSeq } from '../../db/tenant/change-log.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { ApiError, type ErrorCode, invalidReference, ruleViolation } from '../../platform/errors.ts'
import { readMoney } from '../../platform/money.ts'
import { withoutKeys } from '../../platform/number-sources.ts'
import { ISSUE_KINDS, type IssueKind, Issues, issueKind, MAX_LISTED } from '../../platform/issues.ts'
import { addIssues, compile, describeError, fieldProblem } from '../../platform/validation.ts'
import { type BatchItemErrorOut, type BatchItemOut, type BatchOperation, TransactionBatchEnvelope, type TransactionBatchInput } from './batch-model.ts'
import { Effects } from './effects.ts'
import { TransactionBatchItem } from './model.ts'
import { findAdoptable, hasAdoptable, storedUpdatedAt, toTransaction } from './queries.ts'
import { References } from './references.ts'
import { type RuleFallback, loadRules, withRules } from './rules.ts'
import { createTransaction, updateTransaction, type WriteScope, type Written } from './service.ts'
import type { CompiledRule } from '../rules/engine.ts'

/**
 * Batch import (CONTRACT §16). Every item is an ordinary transaction upsert, run by the same
 * service code as `POST /v1/transactions/upsert`, all inside the request's one tenant
 * transaction: the batch commits whole with one fsync, or the first failing item's error
 * rolls all of it back. A dry run runs the same code inside a savepoint that is rolled back.
 */

type Item = TransactionBatchInput['items'][number]
const FIELDS = new Set(Object.keys(TransactionBatchItem.properties))

/** One error of one item, as its own request would have got it, with the item's field. */
function itemSchemaError(error: ValueError, item: unknown, suggest = true): BatchItemErrorOut {
  return { ...fieldProblem(error, item, suggest), code: 'validation_failed' satisfies ErrorCode }
}

/**
 * All of an item's schema errors, one per field (TypeBox reports a missing field twice: required,
 * then the type of the absent value), in the order a refusal lists them: unknown fields, missing
 * ones, wrong ones. Only an item's first few unknown fields get a "did you mean": a hostile
 * item's thousands would each cost a distance to every known field.
 */
function itemSchemaErrors(errors: Iterable<ValueError>, item: unknown): BatchItemErrorOut[] {
  const seen = new Set<string>()
  const byKind: Record<IssueKind, BatchItemErrorOut[]> = { unknown: [], missing: [], invalid: [] }
  for (const error of errors) {
    if (seen.has(error.path)) continue
    seen.add(error.path)
    const kind = issueKind(error)
    byKind[kind].push(itemSchemaError(error, item, kind === 'unknown' && byKind.unknown.length < MAX_LISTED))
  }
  return ISSUE_KINDS.flatMap((kind) => byKind[kind])
}

/**
 * A service error's detail split into the item field it names (`amount must …`, `accountId: …`,
 * a leg's `splits[2].categoryId: …`, `tagIds[0]: …`) and the rest.
 */
function itemRuleError(error: ApiError): BatchItemErrorOut {
  const match = /^([A-Za-z]\w*)((?:\[\d+\])(?:\.[A-Za-z]\w*)?)?(?::\s*|\s+)([\s\S]*)$/.exec(error.detail)
  if (match && FIELDS.has(match[1] as string)) return { field: `${match[1]}${match[2] ?? ''}`, code: error.code, detail: match[3] as string }
  return { field: null, code: error.code, detail: error.detail }
}

/** Fields read as money, and fields naming records, each checked on its own in a dry run (a leg's as well). */
const MONEY_FIELDS = ['amount', 'destinationAmount'] as const
const REFERENCE_FIELDS = ['accountId', 'transferToAccountId', 'categoryId', 'payeeId'] as const
const LEG_REFERENCE_FIELDS = ['categoryId', 'payeeId'] as const

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The errors of an item's fields that do not depend on one another, for a dry run to report
 * together with its schema errors (CONTRACT §16: "all of its errors"): each money value's
 * digits and range, and each id that names none of the owner's records. `taken` are the fields
 * already reported. The details are those the item's own run would give.
 */
function fieldErrors(refs: References, item: unknown, taken: ReadonlySet<string | null>): BatchItemErrorOut[] {
  if (!isRecord(item)) return []
  const errors: BatchItemErrorOut[] = []
  const money = (holder: Record<string, unknown>, key: string, field: string) => {
    if (taken.has(field) || typeof holder[key] !== 'number') return
    try {
      readMoney(holder, key, field)
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      errors.push(itemRuleError(error))
    }
  }
  const reference = (id: unknown, field: string, find: (id: string) => unknown) => {
    if (!taken.has(field) && typeof id === 'string' && !find(id)) errors.push(itemRuleError(invalidReference(field, id)))
  }
  const findIn = (field: string) => (id: string) =>
    field.endsWith('categoryId') ? refs.visibleCategory(id) : field.endsWith('payeeId') ? refs.payee(id) : refs.account(id)
  for (const field of MONEY_FIELDS) money(item, field, field)
  for (const field of REFERENCE_FIELDS) reference(item[field], field, findIn(field))
  const legs = Array.isArray(item.splits) ? item.splits : []
  for (const [index, leg] of legs.entries()) {
    if (!isRecord(leg)) continue
    money(leg, 'amount', `splits[${index}].amount`)
    for (const key of LEG_REFERENCE_FIELDS) reference(leg[key], `splits[${index}].${key}`, findIn(key))
  }
  const tagIds = Array.isArray(item.tagIds) ? item.tagIds : []
  for (const [index, id] of tagIds.entries()) reference(id, `tagIds[${index}]`, (tagId) => refs.tag(tagId))
  return errors
}

/** `items[17].amount: must be a number`: the path first, as CONTRACT §16 asks. */
function itemDetail(index: number, error: BatchItemErrorOut): string {
  return error.field === null ? `items[${index}]: ${error.detail}` : `items[${index}].${error.field}: ${error.detail}`
}

/**
 * The pipeline's body check: the envelope. A sound envelope's items are checked in body order
 * as they are applied (a dry run reports them one by one), so that of several failing items the
 * first is named, whatever is wrong with it (CONTRACT §16). With a wrong envelope nothing is
 * applied: every problem is named at once, the envelope's first, then item by item.
 */
export function checkBatchBody(value: unknown): void {
  const issues = new Issues()
  addIssues(issues, TransactionBatchEnvelope, value, (error) => describeError(error, 'body', value), 'The request body is invalid')
  issues.close()
  if (issues.count === 0) return
  const { items, dryRun } = isRecord(value) ? value : {}
  if (Array.isArray(items) && dryRun !== true) addShapeProblems(issues, items, 0)
  throw new ApiError('validation_failed', issues.detail())
}

/** The shape problems of `items` from `first` on, item by item: a detail so made starts with the first failing item's path. */
function addShapeProblems(issues: Issues, items: readonly unknown[], first: number): void {
  for (let index = first; index < items.length; index++) {
    const item = items[index]
    addIssues(issues, TransactionBatchItem, item, (error) => itemDetail(index, itemSchemaError(error, item)), `items[${index}]: is invalid`)
    issues.close()
  }
}

function shapeProblems(items: readonly unknown[], first: number): ApiError {
  const issues = new Issues()
  addShapeProblems(issues, items, first)
  return new ApiError('validation_failed', issues.detail())
}

const externalIdOfItem = (item: unknown): string | undefined => {
  const value = isRecord(item) ? item.externalId : undefined
  return typeof value === 'string' ? value.trim() : undefined
}

/** The same externalId twice: the later item is named, with the earlier one. */
function repeatedExternalId(index: number, externalId: string, first: number): ApiError {
  return ruleViolation(`items[${index}].externalId: ${JSON.stringify(externalId)} is also items[${first}]; each externalId may appear once in a batch`)
}

function assertDistinctExternalIds(items: readonly unknown[]): void {
  const seen = new Map<string, number>()
  for (const [index, item] of items.entries()) {
    const externalId = externalIdOfItem(item)
    if (externalId === undefined) continue
    const first = seen.get(externalId)
    if (first !== undefined) throw repeatedExternalId(index, externalId, first)
    seen.set(externalId, index)
  }
}

interface Applied {
  operation: BatchOperation
  written?: Written
  /** The rules that matched, when the batch runs them. */
  rulesApplied?: string[]
}

/**
 * How a batch is run beyond its body: what the import route (or any caller in-process) adds.
 * `fallbacks[i]`: values item i proposes without insisting (CONTRACT §23), used where neither
 * the item nor a rule sets the field; they apply with or without `applyRules`.
 */
export interface BatchOptions {
  fallbacks?: readonly (RuleFallback | undefined)[]
  /** Told of each item that adopted an auto-posted transaction, with that transaction's amount before (a dry run's statement check needs it). */
  onAdopt?: (index: number, before: bigint) => void
}

/**
 * A bank's row with a new externalId that stands for an auto-posted transaction (CONTRACT §29)
 * adopts it instead of making a second one: the transaction takes the row's externalId, amount
 * and date (and its bank text), and keeps what the schedule gave it — category, payee, tags, note.
 * A transfer or a split row adopts nothing.
 */
function adopt(tenant: Tenant, country: string | null, item: Item, batch: WriteScope): { written: Written; before: bigint } | undefined {
  if (item.isTransfer || (item.splits !== undefined && item.splits.length > 0)) return undefined
  const posted = findAdoptable(tenant, item.accountId, readMoney(item, 'amount'), item.date)
  if (!posted) return undefined
  const body = withoutKeys(item as Record<string, unknown>, KEPT_ON_ADOPTION) as Item
  const written = updateTransaction(tenant, country, posted.id, body, batch, posted)
  return { written, before: posted.amount }
}

/** What an adopting row does not send: everything but externalId, accountId, amount, date and originalDescription. */
const KEPT_ON_ADOPTION: ReadonlySet<string> = new Set(
  [...FIELDS].filter((field) => !['externalId', 'accountId', 'amount', 'date', 'originalDescription'].includes(field)),
)

/** What the items of one batch share about rules: the rules (none without `applyRules`), and the fallbacks. */
interface Ruling {
  rules: readonly CompiledRule[] | null
  fallbacks: readonly (RuleFallback | undefined)[]
  /** Whether any auto-posted transaction waits for a bank row (CONTRACT §29): read once per batch. */
  adoptable: boolean
}

/**
 * One item, exactly as the upsert route would apply it, except that it shares the batch's reads
 * and, outside a dry run, its effect on balances and payee totals joins the batch's, written
 * once for the whole batch. `unchanged` when it wrote nothing.
 */
function applyItem(
  tenant: Tenant,
  country: string | null,
  item: Item,
  index: number,
  skipDeleted: boolean,
  batch: WriteScope,
  ruling: Ruling,
  onAdopt?: BatchOptions['onAdopt'],
): Applied {
  const externalId = item.externalId.trim()
  const existing = batch.refs.transactionByExternalId(externalId)
  const rulesApplied = ruling.rules ? [] : undefined
  if (!existing && skipDeleted && hasTransactionTombstone(tenant, externalId)) return { operation: 'skipped_deleted', rulesApplied }
  const fallback = ruling.fallbacks[index]
  const ruled = ruling.rules || fallback ? withRules(batch.refs, ruling.rules ?? [], item, existing, { fallback }) : undefined
  const input = ruled?.body ?? item
  const applied = ruling.rules ? ruled?.applied : undefined
  if (!existing) {
    const adopted = ruling.adoptable ? adopt(tenant, country, item, batch) : undefined
    if (adopted) {
      onAdopt?.(index, adopted.before)
      return { operation: 'matched', written: adopted.written, rulesApplied: ruling.rules ? [] : undefined }
    }
    return { operation: 'created', written: createTransaction(tenant, country, input, batch), rulesApplied: applied }
  }
  const before = lastSeq(tenant)
  const written = updateTransaction(tenant, country, existing.id, input, batch, existing)
  // Every real change of a stored row (its legs and tags included) advances the change feed (its triggers), and nothing else does.
  return { operation: lastSeq(tenant) === before ? 'unchanged' : 'updated', written, rulesApplied: applied }
}

function summarize(results: BatchItemOut[]) {
  const count = (operation: BatchOperation) => results.filter((result) => result.operation === operation).length
  return {
    created: count('created'),
    updated: count('updated'),
    unchanged: count('unchanged'),
    matched: count('matched'),
    skippedDeleted: count('skipped_deleted'),
    failed: results.filter((result) => result.errors.length > 0).length,
  }
}

const externalIdOf = (item: unknown): string | null => externalIdOfItem(item) ?? null

/**
 * Runs inside the request's write transaction (the pipeline holds it for every POST). With
 * `applyRules` the owner's active rules are read once for the whole batch, and every item's
 * result lists them in `rulesApplied` (`[]` for an item that failed or was skipped; null without).
 */
export function importTransactions(tenant: Tenant, country: string | null, batch: TransactionBatchInput, options: BatchOptions = {}) {
  if (batch.dryRun) assertDistinctExternalIds(batch.items)
  tenant.widenCacheForImport()
  const skipDeleted = batch.ifDeleted === 'skip'
  const ruling: Ruling = { rules: batch.applyRules ? loadRules(tenant) : null, fallbacks: options.fallbacks ?? [], adoptable: hasAdoptable(tenant) }
  const { onAdopt } = options
  const results = batch.dryRun
    ? dryRun(tenant, country, batch.items, skipDeleted, ruling, onAdopt)
    : applyAll(tenant, country, batch.items, skipDeleted, ruling, onAdopt)
  return { data: results, summary: summarize(results) }
}

/**
 * Balances and payee totals move once for the whole batch (one write per account and payee
 * instead of one per item). Only the sum of the items decides whether a balance leaves the
 * money range; when it does, the error names the item a dry run of the same body names.
 */
function applyAll(
  tenant: Tenant,
  country: string | null,
  items: readonly unknown[],
  skipDeleted: boolean,
  ruling: Ruling,
  onAdopt?: BatchOptions['onAdopt'],
): BatchItemOut[] {
  const check = compile(TransactionBatchItem)
  return tenant.write(() => {
    const effects = new Effects()
    const refs = new References(tenant, country)
    const seen = new Map<string, number>()
    /** A failing item's error, unless the items before it (all the effects hold) already took a total out of range. */
    const failAt = (error: ApiError): never => {
      const failure = effects.rangeFailure(tenant)
      if (failure) throw new ApiError(failure.error.code, itemDetail(failure.item, itemRuleError(failure.error)), failure.error.headers)
      throw error
    }
    const applied = items.map((item, index) => {
      effects.item = index
      if (!check.Check(item)) return failAt(shapeProblems(items, index))
      const externalId = item.externalId.trim()
      const first = seen.get(externalId)
      if (first !== undefined) return failAt(repeatedExternalId(index, externalId, first))
      seen.set(externalId, index)
      try {
        return applyItem(tenant, country, item, index, skipDeleted, { refs, effects }, ruling, onAdopt)
      } catch (error) {
        if (error instanceof ApiError) return failAt(new ApiError(error.code, itemDetail(index, itemRuleError(error)), error.headers))
        throw error
      }
    })
    const failure = effects.rangeFailure(tenant)
    if (failure) throw new ApiError(failure.error.code, itemDetail(failure.item, itemRuleError(failure.error)), failure.error.headers)
    try {
      effects.apply(tenant)
    } catch (error) {
      if (error instanceof ApiError) throw new ApiError(error.code, `items: ${error.detail}`, error.headers)
      throw error
    }
    // The rows are in hand: each item's object needs only its categories' types, read once per category.
    const typeOf = (categoryId: string | null) => (categoryId === null ? null : (refs.category(categoryId)?.type ?? null))
    // updatedAt as stored (CONTRACT §25): a created item's is its createdAt, an unchanged one's as
    // it was read; an updated one's was set by the feed's trigger, so it is read back.
    const toItemData = ({ row, legs, tagIds }: Written, operation: BatchOperation) =>
      toTransaction({
        txn: operation === 'updated' ? { ...row, updatedAt: storedUpdatedAt(tenant, row.id) } : row,
        categoryType: typeOf(row.categoryId),
        splits: legs.map((leg) => ({ ...leg, categoryType: typeOf(leg.categoryId) })),
        tagIds,
      })
    return applied.map(({ operation, written, rulesApplied }, index) => ({
      index,
      externalId: externalIdOf(items[index]),
      operation,
      data: written ? toItemData(written, operation) : null,
      errors: [],
      rulesApplied: rulesApplied ?? null,
    }))
  })
}

/**
 * Every item through the same code, each in a savepoint of its own so that one failure does
 * not hide the next, all rolled back at the end. Items see the items before them, as in a
 * real run. `data` stays null: nothing was written, so there is nothing to show.
 */
function dryRun(
  tenant: Tenant,
  country: string | null,
  items: readonly unknown[],
  skipDeleted: boolean,
  ruling: Ruling,
  onAdopt?: BatchOptions['onAdopt'],
): BatchItemOut[] {
  const check = compile(TransactionBatchItem)
  const run = (sql: string) => tenant.sqlite.run(sql)
  const results: BatchItemOut[] = []
  tenant.write(() => {
    const refs = new References(tenant, country)
    run('SAVEPOINT batch_dry_run')
    try {
      for (const [index, item] of items.entries()) {
        const externalId = externalIdOf(item)
        // Every error that can be told field by field, together; the rules only for an item without one.
        const valid = check.Check(item)
        const errors = valid ? [] : itemSchemaErrors(check.Errors(item), item)
        errors.push(...fieldErrors(refs, item, new Set(errors.map((error) => error.field))))
        const none = ruling.rules ? [] : null
        if (!valid || errors.length > 0) {
          results.push({ index, externalId, operation: null, data: null, errors, rulesApplied: none })
          continue
        }
        run('SAVEPOINT batch_item')
        try {
          const { operation, rulesApplied } = applyItem(tenant, country, item, index, skipDeleted, { refs }, ruling, onAdopt)
          results.push({ index, externalId, operation, data: null, errors: [], rulesApplied: rulesApplied ?? null })
        } catch (error) {
          if (!(error instanceof ApiError)) throw error
          run('ROLLBACK TO batch_item')
          // What this item read or created before it failed may be gone now.
          refs.forget()
          results.push({ index, externalId, operation: null, data: null, errors: [itemRuleError(error)], rulesApplied: none })
        } finally {
          run('RELEASE batch_item')
        }
      }
    } finally {
      run('ROLLBACK TO batch_dry_run')
      run('RELEASE batch_dry_run')
    }
  })
  return results
}
