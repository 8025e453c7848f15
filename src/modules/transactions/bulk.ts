import { lastSeq } from '../../db/tenant/change-log.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { ApiError, invalidReference, ruleViolation } from '../../platform/errors.ts'
import { attachSources, sourcesOf } from '../../platform/number-sources.ts'
import type { BulkUpdateResultOut, TransactionBulkUpdateInput } from './bulk-model.ts'
import { Effects } from './effects.ts'
import { TransactionUpdate, type TransactionUpdateInput } from './model.ts'
import { findTransaction, storedUpdatedAt, toTransaction } from './queries.ts'
import { References } from './references.ts'
import { updateTransaction, viewOf, type WriteScope, type Written } from './service.ts'

/**
 * Bulk update (CONTRACT §26): each item is the PATCH of one transaction, run by the same service
 * code as `PATCH /v1/transactions/{id}`, all inside the request's one tenant transaction: every
 * change commits together, or the first failing item's error rolls all of them back. A dry run
 * runs the same code, each item in a savepoint, and rolls everything back.
 */

type Item = TransactionBulkUpdateInput['items'][number]
const FIELDS = new Set([...Object.keys(TransactionUpdate.properties), 'transactionId'])

/** The item's own patch laid over the shared one, field by field, keeping each number's source text (money is read from it). */
function patchOf(shared: TransactionUpdateInput | undefined, own: TransactionUpdateInput | undefined): TransactionUpdateInput {
  if (!shared) return own ?? {}
  if (!own) return shared
  const patch = { ...shared, ...own }
  const sources = new Map<string, string>()
  for (const [from, keys] of [
    [shared, Object.keys(shared).filter((key) => !Object.hasOwn(own, key))],
    [own, Object.keys(own)],
  ] as const) {
    const kept = sourcesOf(from)
    if (!(kept instanceof Map)) continue
    for (const key of keys) {
      const text = kept.get(key)
      if (text !== undefined) sources.set(key, text)
    }
  }
  attachSources(patch, sources)
  return patch
}

/** `items[3]: categoryId: …`: which item, then the error as its own PATCH would have said it. */
const itemError = (index: number, error: ApiError) => new ApiError(error.code, `items[${index}]: ${error.detail}`, error.headers)

/** An error of one item as a dry run reports it: the patch's field it names, if any, and the rest. */
function fieldError(error: ApiError): BulkUpdateResultOut['errors'][number] {
  const match = /^([A-Za-z]\w*)((?:\[\d+\])(?:\.[A-Za-z]\w*)?)?(?::\s*|\s+)([\s\S]*)$/.exec(error.detail)
  if (match && FIELDS.has(match[1] as string)) return { field: `${match[1]}${match[2] ?? ''}`, code: error.code, detail: match[3] as string }
  return { field: null, code: error.code, detail: error.detail }
}

function assertDistinct(items: readonly Item[]): void {
  const seen = new Map<string, number>()
  for (const [index, item] of items.entries()) {
    const first = seen.get(item.transactionId)
    if (first !== undefined) {
      throw ruleViolation(`items[${index}].transactionId: ${JSON.stringify(item.transactionId)} is also items[${first}]; each transaction may appear once`)
    }
    seen.set(item.transactionId, index)
  }
}

/** One item, as its PATCH would run: `unchanged` when it wrote nothing (the change feed did not move). */
function applyItem(tenant: Tenant, country: string | null, item: Item, patch: TransactionUpdateInput, scope: WriteScope) {
  const current = findTransaction(tenant, item.transactionId)
  if (!current) throw invalidReference('transactionId', item.transactionId)
  const before = lastSeq(tenant)
  const written = updateTransaction(tenant, country, item.transactionId, patch, scope, current)
  return { operation: lastSeq(tenant) === before ? ('unchanged' as const) : ('updated' as const), written }
}

function summarize(results: BulkUpdateResultOut[]) {
  return {
    updated: results.filter((result) => result.operation === 'updated').length,
    unchanged: results.filter((result) => result.operation === 'unchanged').length,
    failed: results.filter((result) => result.errors.length > 0).length,
  }
}

/** Runs inside the request's write transaction (the pipeline holds it for every POST). */
export function bulkUpdateTransactions(tenant: Tenant, country: string | null, body: TransactionBulkUpdateInput) {
  assertDistinct(body.items)
  tenant.widenCacheForImport()
  const results = body.dryRun ? dryRun(tenant, country, body) : applyAll(tenant, country, body)
  return { data: results, summary: summarize(results) }
}

/** Balances, payee totals and tag counts move once for all the items, as in a batch import (CONTRACT §16). */
function applyAll(tenant: Tenant, country: string | null, body: TransactionBulkUpdateInput): BulkUpdateResultOut[] {
  return tenant.write(() => {
    const refs = new References(tenant, country)
    const effects = new Effects()
    const rangeCheck = () => {
      const failure = effects.rangeFailure(tenant)
      if (failure) throw itemError(failure.item, failure.error)
    }
    const applied = body.items.map((item, index) => {
      effects.item = index
      try {
        return applyItem(tenant, country, item, patchOf(body.patch, item.patch), { refs, effects })
      } catch (error) {
        if (!(error instanceof ApiError)) throw error
        // An earlier item may already have taken a total out of range: that one is named.
        rangeCheck()
        throw itemError(index, error)
      }
    })
    rangeCheck()
    effects.apply(tenant)
    const typeOf = (categoryId: string | null) => (categoryId === null ? null : (refs.category(categoryId)?.type ?? null))
    // updatedAt as stored: the feed's trigger set it when the item changed something (CONTRACT §25).
    const toData = ({ row, legs, tagIds }: Written) =>
      toTransaction({
        txn: { ...row, updatedAt: storedUpdatedAt(tenant, row.id) },
        categoryType: typeOf(row.categoryId),
        splits: legs.map((leg) => ({ ...leg, categoryType: typeOf(leg.categoryId) })),
        tagIds,
      })
    return applied.map(({ operation, written }, index) => ({
      index,
      transactionId: (body.items[index] as Item).transactionId,
      operation,
      data: toData(written),
      errors: [],
    }))
  })
}

/**
 * Every item through the same code, each in a savepoint of its own so that one failure does not
 * hide the next, all rolled back at the end. Items see the items before them; `data` is the
 * transaction as the change would leave it.
 */
function dryRun(tenant: Tenant, country: string | null, body: TransactionBulkUpdateInput): BulkUpdateResultOut[] {
  const run = (sql: string) => tenant.sqlite.run(sql)
  const results: BulkUpdateResultOut[] = []
  tenant.write(() => {
    const refs = new References(tenant, country)
    run('SAVEPOINT bulk_dry_run')
    try {
      for (const [index, item] of body.items.entries()) {
        run('SAVEPOINT bulk_item')
        try {
          const { operation, written } = applyItem(tenant, country, item, patchOf(body.patch, item.patch), { refs })
          results.push({ index, transactionId: item.transactionId, operation, data: toTransaction(viewOf(tenant, written.row)), errors: [] })
        } catch (error) {
          if (!(error instanceof ApiError)) throw error
          run('ROLLBACK TO bulk_item')
          refs.forget()
          results.push({ index, transactionId: item.transactionId, operation: null, data: null, errors: [fieldError(error)] })
        } finally {
          run('RELEASE bulk_item')
        }
      }
    } finally {
      run('ROLLBACK TO bulk_dry_run')
      run('RELEASE bulk_dry_run')
    }
  })
  return results
}
