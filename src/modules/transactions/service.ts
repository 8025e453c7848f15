import { eq } from 'drizzle-orm'
import { newId } from '../../db/ids.ts'
import { settleCreated } from '../../db/tenant/change-log.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { transactions } from '../../db/tenant/schema.ts'
import { externalIdConflict, invalidReference, notFound, ruleViolation } from '../../platform/errors.ts'
import { readMoney } from '../../platform/money.ts'
import { numberSource } from '../../platform/number-sources.ts'
import { trimmed } from '../../platform/schemas.ts'
import { Effects } from './effects.ts'
import type { TransactionCreateInput, TransactionUpsertInput, TransactionWriteInput } from './model.ts'
import {
  type Draft,
  findTransaction,
  findTransactionView,
  insertTransaction,
  replaceTransaction,
  type TransactionRow,
  type TransactionView,
} from './queries.ts'
import { References } from './references.ts'
import { deleteSplits, insertSplits, type SplitRow, splitsOf } from './split-queries.ts'
import { assertSplitFits, type Leg, resolveLegs, sameLegs } from './splits.ts'
import { deleteTagLinks, insertTagLinks, tagIdsOf } from './tag-queries.ts'
import { resolveTags, sameTags } from './tagging.ts'
import { resolveTransfer } from './transfers.ts'
import { searchTextOf, storeSearchText } from './search-text.ts'
import { loadRules, withRules } from './rules.ts'

/**
 * Transactions move money (CONTRACT §4): every create, change and delete applies its effect
 * on account balances and payee aggregates in the same database transaction, so balances
 * and totals never drift. An expense (amount > 0) lowers the source balance, income raises
 * it; a transfer also credits the destination with `destinationAmount`. A transaction's legs
 * (CONTRACT §21) and tags (CONTRACT §22) are written with it and move payee totals and tag counts.
 */

export function getTransactionView(tenant: Tenant, id: string): TransactionView {
  const view = findTransactionView(tenant, id)
  if (!view) throw notFound('Transaction', id)
  return view
}

/** A stored transaction's legs and tag ids, in order. */
interface StoredParts {
  legs: readonly SplitRow[]
  tagIds: readonly string[]
}

const NOTHING_STORED: StoredParts = { legs: [], tagIds: [] }

/** A transaction as a write left it: its row, its legs and its tags. */
export interface Written extends StoredParts {
  row: TransactionRow
}

/** The body applied: the new row, and the new legs and tags (null where the body keeps the stored ones). */
interface Resolved {
  draft: Draft
  legs: Leg[] | null
  tagIds: string[] | null
}

/**
 * Applies a request body to a draft (the stored row and parts for PATCH, blanks for create) and
 * checks every rule against the result: references, payee resolution, splits, transfer rules, tags.
 */
function resolveDraft(refs: References, body: TransactionWriteInput, current: Draft, stored: StoredParts, selfId?: string): Resolved {
  const next: Draft = { ...current }
  if (body.externalId !== undefined) {
    const externalId = trimmed(body.externalId)
    const holder = externalId === null ? undefined : refs.transactionByExternalId(externalId)
    if (holder && holder.id !== selfId) {
      throw externalIdConflict('transaction', externalId, holder.id)
    }
    next.externalId = externalId
  }
  if (body.accountId !== undefined) next.accountId = body.accountId
  if (body.amount !== undefined) next.amount = readMoney(body, 'amount')
  if (body.date !== undefined) next.date = body.date
  if (body.note !== undefined) next.note = trimmed(body.note)
  if (body.originalDescription !== undefined) next.originalDescription = trimmed(body.originalDescription)
  if (body.time !== undefined) next.time = body.time
  if (body.isTransfer !== undefined) next.isTransfer = body.isTransfer
  if (body.transferToAccountId !== undefined) next.transferToAccountId = body.transferToAccountId
  if (body.exchangeRate !== undefined) next.exchangeRate = numberSource(body, 'exchangeRate')

  const source = refs.account(next.accountId)
  if (!source) throw invalidReference('accountId', next.accountId)

  // Payee: by id, or by name (found or created); the payee's category fills an absent category.
  if (body.payeeId !== undefined && body.payeeName !== undefined) throw ruleViolation('Send payeeId or payeeName, not both')
  // The payee this body names, found once: its category may fill an absent category below.
  let namedPayee: { id: string; categoryId: string | null } | null | undefined
  if (body.payeeName !== undefined) {
    namedPayee = refs.payeeNamed(body.payeeName.trim())
  } else if (body.payeeId !== undefined) {
    namedPayee = body.payeeId === null ? null : refs.payee(body.payeeId)
    if (body.payeeId !== null && !namedPayee) throw invalidReference('payeeId', body.payeeId)
  }
  if (namedPayee !== undefined) next.payeeId = namedPayee?.id ?? null

  // Legs: a given list replaces the stored one; while split, the legs hold the categories.
  const legs = body.splits === undefined ? null : resolveLegs(refs, body.splits, next.payeeId)
  const split = (legs ?? stored.legs).length > 0
  if (body.categoryId !== undefined) {
    if (body.categoryId !== null && !refs.visibleCategory(body.categoryId)) throw invalidReference('categoryId', body.categoryId)
    if (body.categoryId !== null && split) {
      throw ruleViolation('categoryId: a split transaction has no category of its own (its legs have them); send splits: [] to unsplit it')
    }
    next.categoryId = body.categoryId
  } else if (split) {
    next.categoryId = null
  } else if (namedPayee && next.categoryId === null) {
    next.categoryId = namedPayee.categoryId
  }

  resolveTransfer(refs, body, current, next)
  assertSplitFits(legs ?? stored.legs, next, legs === null && next.amount !== current.amount)
  const tagIds = resolveTags(refs, body, stored.tagIds)
  next.hasSplits = split
  next.hasTags = (tagIds ?? stored.tagIds).length > 0
  return { draft: next, legs, tagIds }
}

const BLANK: Draft = {
  externalId: null,
  accountId: '',
  categoryId: null,
  payeeId: null,
  amount: 0n,
  date: '',
  note: null,
  originalDescription: null,
  time: null,
  isTransfer: false,
  transferToAccountId: null,
  destinationAmount: null,
  exchangeRate: null,
  hasSplits: false,
  hasTags: false,
  scheduleId: null,
}

/**
 * What the writes of one database transaction share: the rows they have read (an upsert's
 * externalId lookup, a batch's accounts and payees), and, for a batch import outside a dry run
 * (which reports range errors per item), the sum of their effects on balances and payee totals,
 * for the caller to apply once for all. Without `effects` each write applies its own.
 */
export interface WriteScope {
  refs: References
  effects?: Effects
}

/** The stored legs and tags of `row`, read only when it has some. */
function storedParts(tenant: Tenant, row: TransactionRow): StoredParts {
  return {
    legs: row.hasSplits ? (splitsOf(tenant, [row.id]).get(row.id) ?? []) : [],
    tagIds: row.hasTags ? (tagIdsOf(tenant, [row.id]).get(row.id) ?? []) : [],
  }
}

/** Stores `legs` as the transaction's, with new ids, in order, carrying its sort key. */
function writeLegs(tenant: Tenant, row: TransactionRow, legs: readonly Leg[]): SplitRow[] {
  const rows = legs.map((leg, position) => ({ ...leg, id: newId('spl'), transactionId: row.id, position, date: row.date, createdAt: row.createdAt }))
  insertSplits(tenant, rows)
  return rows
}

/** Records a transaction with its legs and tags, and applies its effect, or adds the effect to the scope's. */
export function createTransaction(
  tenant: Tenant,
  country: string | null,
  body: TransactionWriteInput,
  scope?: WriteScope,
  /** The schedule posting it (CONTRACT §29): a field no request sets. */
  scheduleId: string | null = null,
): Written {
  return tenant.write(() => {
    const refs = scope?.refs ?? new References(tenant, country)
    const resolved = resolveDraft(refs, body, BLANK, NOTHING_STORED)
    const now = Date.now()
    const row: TransactionRow = {
      ...resolved.draft,
      scheduleId,
      id: newId('txn'),
      createdAt: now,
      updatedAt: now,
      createdBy: tenant.actor,
      updatedBy: tenant.actor,
    }
    insertTransaction(tenant, row)
    const legs = writeLegs(tenant, row, resolved.legs ?? [])
    const tagIds = resolved.tagIds ?? []
    insertTagLinks(tenant, row, tagIds)
    const text = searchTextOf(row, legs)
    if (text !== null) storeSearchText(tenant, row.id, text)
    settleCreated(tenant, 'transactions', row.id)
    refs.stored(row)
    const effects = (scope?.effects ?? new Effects()).add(row, 1n, { legs, tagIds })
    if (!scope?.effects) effects.apply(tenant)
    return { row, legs, tagIds }
  })
}

/**
 * Changes a transaction (`current`, when the caller has already read it) and moves its effect.
 * Legs and tags sent as they are stored are kept as they are (same leg ids, nothing written).
 */
export function updateTransaction(
  tenant: Tenant,
  country: string | null,
  id: string,
  body: TransactionWriteInput,
  scope?: WriteScope,
  known?: TransactionRow,
): Written {
  return tenant.write(() => {
    const current = known ?? findTransaction(tenant, id)
    if (!current) throw notFound('Transaction', id)
    const refs = scope?.refs ?? new References(tenant, country)
    const stored = storedParts(tenant, current)
    // updatedAt is written back as it was: the feed's trigger moves it when the write changes something.
    const { id: _id, createdAt, updatedAt, createdBy, updatedBy, ...draft } = current
    const resolved = resolveDraft(refs, body, draft, stored, id)
    // updatedBy moves only with a change, as updatedAt does (CONTRACT §30).
    const changed =
      (Object.keys(draft) as (keyof typeof draft)[]).some((field) => draft[field] !== resolved.draft[field]) ||
      (resolved.legs !== null && !sameLegs(resolved.legs, stored.legs)) ||
      (resolved.tagIds !== null && !sameTags(resolved.tagIds, stored.tagIds))
    const next: TransactionRow = { ...resolved.draft, id, createdAt, updatedAt, createdBy, updatedBy: changed ? tenant.actor : updatedBy }
    replaceTransaction(tenant, next)
    let legs = stored.legs
    if (resolved.legs !== null && !sameLegs(resolved.legs, stored.legs)) {
      deleteSplits(tenant, id)
      legs = writeLegs(tenant, next, resolved.legs)
    }
    let tagIds = stored.tagIds
    if (resolved.tagIds !== null && !sameTags(resolved.tagIds, stored.tagIds)) {
      deleteTagLinks(tenant, id)
      insertTagLinks(tenant, next, resolved.tagIds)
      tagIds = resolved.tagIds
    }
    const text = searchTextOf(next, legs)
    if (text !== searchTextOf(current, stored.legs)) storeSearchText(tenant, id, text)
    refs.stored(next, current)
    const effects = (scope?.effects ?? new Effects()).add(current, -1n, stored).add(next, 1n, { legs, tagIds })
    if (!scope?.effects) effects.apply(tenant)
    return { row: next, legs, tagIds }
  })
}

/** Permanent; the transaction's effect on balances, payee totals and tag counts is reversed, its legs and tags go with it. */
export function deleteTransaction(tenant: Tenant, id: string): TransactionView {
  return tenant.write(() => {
    const view = getTransactionView(tenant, id)
    new Effects().add(view.txn, -1n, { legs: view.splits, tagIds: view.tagIds }).apply(tenant)
    tenant.db.delete(transactions).where(eq(transactions.id, id)).run()
    return view
  })
}

/** `POST /v1/transactions`: a create, with the owner's rules first when the body asks for them (CONTRACT §23). */
export function recordTransaction(tenant: Tenant, country: string | null, body: TransactionCreateInput): { written: Written; rulesApplied?: string[] } {
  return tenant.write(() => {
    const refs = new References(tenant, country)
    if (!body.applyRules) return { written: createTransaction(tenant, country, body, { refs }) }
    const ruled = withRules(refs, loadRules(tenant), body)
    return { written: createTransaction(tenant, country, ruled.body, { refs }), rulesApplied: ruled.applied }
  })
}

export function upsertTransaction(tenant: Tenant, country: string | null, body: TransactionUpsertInput) {
  return tenant.write(() => {
    // The lookup here is the one the body's externalId check then reuses.
    const refs = new References(tenant, country)
    const existing = refs.transactionByExternalId(body.externalId.trim())
    // On a match the rules fill only what the stored transaction leaves empty: what the user set since stays.
    const ruled = body.applyRules ? withRules(refs, loadRules(tenant), body, existing) : undefined
    const input = ruled?.body ?? body
    const rulesApplied = ruled?.applied
    if (!existing) return { created: true, written: createTransaction(tenant, country, input, { refs }), rulesApplied }
    return { created: false, written: updateTransaction(tenant, country, existing.id, input, { refs }, existing), rulesApplied }
  })
}

export function viewOf(tenant: Tenant, row: TransactionRow): TransactionView {
  return getTransactionView(tenant, row.id)
}
