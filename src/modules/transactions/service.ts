import { eq } from 'drizzle-orm'
import { newId } from '../../db/ids.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { transactions } from '../../db/tenant/schema.ts'
import { externalIdConflict, invalidReference, notFound, ruleViolation } from '../../platform/errors.ts'
import { MAX_UNITS, multiplyByRate, readMoney } from '../../platform/money.ts'
import { numberSource } from '../../platform/number-sources.ts'
import { type CursorKey, decodeCursor, page } from '../../platform/pagination.ts'
import { trimmed } from '../../platform/schemas.ts'
import { categoryTypes } from '../categories/queries.ts'
import { Effects } from './effects.ts'
import type { TransactionListInput, TransactionUpdateInput } from './model.ts'
import {
  findTransaction,
  findTransactionView,
  insertTransaction,
  type ListFilter,
  listTransactionValues,
  replaceTransaction,
  type TransactionRow,
  type TransactionValues,
  type TransactionView,
  transactionOfValues,
  VALUES_AT,
} from './queries.ts'
import { References } from './references.ts'

/**
 * Transactions move money (CONTRACT §4): every create, change and delete applies its effect
 * on account balances and payee aggregates in the same database transaction, so balances
 * and totals never drift. An expense (amount > 0) lowers the source balance, income raises
 * it; a transfer also credits the destination with `destinationAmount`.
 */

export function getTransactionView(tenant: Tenant, id: string): TransactionView {
  const view = findTransactionView(tenant, id)
  if (!view) throw notFound('Transaction', id)
  return view
}

type Draft = Omit<TransactionRow, 'id' | 'createdAt'>

/**
 * Applies a request body to a draft (the stored row for PATCH, blanks for create) and checks
 * every rule against the result: references, transfer rules, payee resolution.
 */
function resolveDraft(refs: References, body: TransactionUpdateInput, current: Draft, selfId?: string): Draft {
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
  if (body.categoryId !== undefined) {
    if (body.categoryId !== null && !refs.visibleCategory(body.categoryId)) throw invalidReference('categoryId', body.categoryId)
    next.categoryId = body.categoryId
  } else if (namedPayee && next.categoryId === null) {
    next.categoryId = namedPayee.categoryId
  }

  resolveTransfer(refs, body, current, next)
  return next
}

function resolveTransfer(refs: References, body: TransactionUpdateInput, current: Draft, next: Draft): void {
  if (!next.isTransfer) {
    if (next.transferToAccountId !== null) throw ruleViolation('transferToAccountId needs isTransfer: true')
    if (body.destinationAmount !== undefined) throw ruleViolation('destinationAmount applies to transfers only (isTransfer: true)')
    next.destinationAmount = null
    return
  }
  if (next.transferToAccountId === null) throw ruleViolation('A transfer needs transferToAccountId')
  const destination = refs.account(next.transferToAccountId)
  if (!destination) throw invalidReference('transferToAccountId', next.transferToAccountId)
  if (next.transferToAccountId === next.accountId) throw ruleViolation('A transfer must go to another account')
  if (next.amount <= 0n) throw ruleViolation('A transfer amount must be greater than 0')

  if (body.destinationAmount !== undefined) {
    next.destinationAmount = readMoney(body, 'destinationAmount')
    return
  }
  deriveDestinationAmount(refs, current, next, destination.currency)
}

/** amount × exchangeRate, or amount between accounts of one currency, when the transfer moved. */
function deriveDestinationAmount(refs: References, current: Draft, next: Draft, destinationCurrency: string): void {
  const moved =
    !current.isTransfer ||
    next.amount !== current.amount ||
    next.accountId !== current.accountId ||
    next.transferToAccountId !== current.transferToAccountId ||
    next.exchangeRate !== current.exchangeRate
  if (!moved && current.destinationAmount !== null) return
  const source = refs.account(next.accountId)
  if (next.exchangeRate !== null) {
    const credited = multiplyByRate(next.amount, next.exchangeRate)
    if (credited > MAX_UNITS) throw ruleViolation('amount × exchangeRate would exceed the supported range of ±92233720368')
    if (credited === 0n) throw ruleViolation('amount × exchangeRate rounds to 0; send destinationAmount instead')
    next.destinationAmount = credited
  } else if (source?.currency === destinationCurrency) {
    next.destinationAmount = next.amount
  } else {
    throw ruleViolation(`A transfer from ${source?.currency} to ${destinationCurrency} needs destinationAmount or exchangeRate`)
  }
}

const BLANK: Draft = {
  externalId: null,
  accountId: '',
  categoryId: null,
  payeeId: null,
  amount: 0n,
  date: '',
  note: null,
  time: null,
  isTransfer: false,
  transferToAccountId: null,
  destinationAmount: null,
  exchangeRate: null,
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

/** Records a transaction and applies its effect, or adds the effect to the scope's. */
export function createTransaction(tenant: Tenant, country: string | null, body: TransactionUpdateInput, scope?: WriteScope): TransactionRow {
  return tenant.write(() => {
    const refs = scope?.refs ?? new References(tenant, country)
    const draft = resolveDraft(refs, body, BLANK)
    const row: TransactionRow = { ...draft, id: newId('txn'), createdAt: Date.now() }
    insertTransaction(tenant, row)
    refs.stored(row)
    const effects = (scope?.effects ?? new Effects()).add(row, 1n)
    if (!scope?.effects) effects.apply(tenant)
    return row
  })
}

/** Changes a transaction (`current`, when the caller has already read it) and moves its effect. */
export function updateTransaction(
  tenant: Tenant,
  country: string | null,
  id: string,
  body: TransactionUpdateInput,
  scope?: WriteScope,
  known?: TransactionRow,
): TransactionRow {
  return tenant.write(() => {
    const current = known ?? findTransaction(tenant, id)
    if (!current) throw notFound('Transaction', id)
    const refs = scope?.refs ?? new References(tenant, country)
    const { id: _id, createdAt, ...draft } = current
    const next: TransactionRow = { ...resolveDraft(refs, body, draft, id), id, createdAt }
    replaceTransaction(tenant, next)
    refs.stored(next, current)
    const effects = (scope?.effects ?? new Effects()).add(current, -1n).add(next, 1n)
    if (!scope?.effects) effects.apply(tenant)
    return next
  })
}

/** Permanent; the transaction's effect on balances and payee totals is reversed. */
export function deleteTransaction(tenant: Tenant, id: string): TransactionView {
  return tenant.write(() => {
    const view = getTransactionView(tenant, id)
    new Effects().add(view.txn, -1n).apply(tenant)
    tenant.db.delete(transactions).where(eq(transactions.id, id)).run()
    return view
  })
}

export function upsertTransaction(tenant: Tenant, country: string | null, body: TransactionUpdateInput & { externalId: string }) {
  return tenant.write(() => {
    // The lookup here is the one the body's externalId check then reuses.
    const refs = new References(tenant, country)
    const existing = refs.transactionByExternalId(body.externalId.trim())
    if (!existing) return { created: true, row: createTransaction(tenant, country, body, { refs }) }
    return { created: false, row: updateTransaction(tenant, country, existing.id, body, { refs }, existing) }
  })
}

export function viewOf(tenant: Tenant, row: TransactionRow): TransactionView {
  return getTransactionView(tenant, row.id)
}

const { id: ID, date: DATE, createdAt: CREATED_AT } = VALUES_AT
const sortKey = (row: TransactionValues): CursorKey => [row[DATE], Number(row[CREATED_AT]), row[ID]]
const newerFirst = (a: TransactionValues, b: TransactionValues) =>
  a[DATE] !== b[DATE] ? (a[DATE] < b[DATE] ? 1 : -1) : a[CREATED_AT] !== b[CREATED_AT] ? (a[CREATED_AT] < b[CREATED_AT] ? 1 : -1) : a[ID] < b[ID] ? 1 : -1

/** Newest first (date, then createdAt, then id), filtered, one keyset page. */
export function listTransactionPage(tenant: Tenant, query: TransactionListInput) {
  const limit = query.limit ?? 50
  const after = decodeCursor(query.cursor, 'sns')
  const filter: ListFilter = {
    categoryId: query.categoryId !== undefined,
    payeeId: query.payeeId !== undefined,
    from: query.from !== undefined,
    to: query.to !== undefined,
    externalId: query.externalId !== undefined,
    cursor: after !== undefined,
  }
  const values: Record<string, string | number> = { limit: limit + 1 }
  for (const name of ['categoryId', 'payeeId', 'from', 'to', 'externalId', 'accountId'] as const) {
    const value = query[name]
    if (value !== undefined) values[name] = value
  }
  if (after) Object.assign(values, { date: after[0], createdAt: after[1], id: after[2] })
  // One snapshot for the category types and the rows (and both scans of an account filter).
  return tenant.read(() => {
    const types = categoryTypes(tenant)
    let rows: TransactionValues[]
    if (query.accountId === undefined) {
      rows = listTransactionValues(tenant, filter, values)
    } else {
      // Source or destination: two index-ordered scans merged, instead of one OR that must sort.
      const sourceRows = listTransactionValues(tenant, { ...filter, accountColumn: 'source' }, values)
      const destinationRows = listTransactionValues(tenant, { ...filter, accountColumn: 'destination' }, values)
      rows = [...sourceRows, ...destinationRows].sort(newerFirst).slice(0, limit + 1)
    }
    return page(rows, limit, sortKey, (row) => transactionOfValues(row, types))
  })
}
