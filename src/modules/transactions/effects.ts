import type { Tenant } from '../../db/tenant/tenant.ts'
import { ApiError, invalidReference } from '../../platform/errors.ts'
import { addUnits, MAX_UNITS, type Units } from '../../platform/money.ts'
import { findAccount, setAccountBalance } from '../accounts/queries.ts'
import { adjustPayeeStats, findPayee } from '../payees/queries.ts'
import { moveTagCount } from '../tags/queries.ts'
import type { TransactionRow } from './queries.ts'
import type { SplitRow } from './split-queries.ts'

/** What a transaction holds beside its row that totals depend on: its legs and its tags. */
export interface Parts {
  legs: readonly Pick<SplitRow, 'amount' | 'payeeId'>[]
  tagIds: readonly string[]
}

export const NO_PARTS: Parts = { legs: [], tagIds: [] }

/**
 * What each payee gets from one transaction (CONTRACT §21): every leg counts toward its own
 * payee, else the transaction's; `spent` sums the positive amounts (of a transfer, none), and the
 * transaction counts once for each payee it names, its own included.
 */
function spentByPayee(row: TransactionRow, legs: Parts['legs']): Map<string, Units> {
  const spent = new Map<string, Units>()
  const positive = (amount: Units) => (!row.isTransfer && amount > 0n ? amount : 0n)
  if (row.payeeId) spent.set(row.payeeId, legs.length === 0 ? positive(row.amount) : 0n)
  for (const leg of legs) {
    const payeeId = leg.payeeId ?? row.payeeId
    if (payeeId) spent.set(payeeId, (spent.get(payeeId) ?? 0n) + positive(leg.amount))
  }
  return spent
}

/** One move of a balance or a payee's total, and the batch item (0 outside a batch) that made it. */
interface Move {
  item: number
  kind: 'account' | 'payee'
  id: string
  delta: Units
}

/** What transactions do to balances, payee totals and tag counts, summed before anything is written. */
export class Effects {
  readonly balances = new Map<string, Units>()
  readonly payees = new Map<string, { count: number; spent: Units }>()
  readonly tags = new Map<string, number>()
  /** Every move in order, for finding which batch item took a total out of range. */
  private readonly moves: Move[] = []
  /** The batch item whose effects are being added. */
  item = 0

  /** Adds (sign 1) or removes (sign -1) the effect of a stored transaction with its legs and tags. */
  add(row: TransactionRow, sign: 1n | -1n, parts: Parts = NO_PARTS): this {
    this.move(row.accountId, -row.amount * sign)
    if (row.isTransfer && row.transferToAccountId && row.destinationAmount !== null) this.move(row.transferToAccountId, row.destinationAmount * sign)
    for (const [payeeId, spent] of spentByPayee(row, parts.legs)) {
      const total = this.payees.get(payeeId) ?? { count: 0, spent: 0n }
      this.payees.set(payeeId, { count: total.count + Number(sign), spent: total.spent + spent * sign })
      if (spent !== 0n) this.moves.push({ item: this.item, kind: 'payee', id: payeeId, delta: spent * sign })
    }
    for (const tagId of parts.tagIds) this.tags.set(tagId, (this.tags.get(tagId) ?? 0) + Number(sign))
    return this
  }

  /**
   * Before `apply`, for a batch: when the summed effect takes a balance or a payee's total out
   * of the money range, the item to blame and its error, found as a dry run finds it: items in
   * order from the stored totals, an item that would leave the range failing and adding nothing.
   * Null when every sum stays in range (an excursion on the way to a valid sum is no failure).
   */
  rangeFailure(tenant: Tenant): { item: number; error: ApiError } | null {
    const stored = new Map<string, Units>()
    const start = (kind: Move['kind'], id: string): Units | undefined => {
      const key = `${kind}:${id}`
      if (!stored.has(key)) {
        const value = kind === 'account' ? findAccount(tenant, id)?.balance : findPayee(tenant, id)?.totalSpent
        if (value === undefined) return undefined
        stored.set(key, value)
      }
      return stored.get(key)
    }
    const label = (kind: Move['kind'], id: string) => (kind === 'account' ? `The balance of account ${id}` : `totalSpent of payee ${id}`)
    const outOfRange = (value: Units) => value > MAX_UNITS || value < -MAX_UNITS
    const sums: [Move['kind'], Map<string, Units>][] = [
      ['account', this.balances],
      ['payee', new Map([...this.payees].map(([id, total]) => [id, total.spent]))],
    ]
    const failing = sums.some(([kind, deltas]) => [...deltas].some(([id, delta]) => delta !== 0n && outOfRange((start(kind, id) ?? 0n) + delta)))
    if (!failing) return null
    const running = new Map<string, Units>()
    for (let at = 0; at < this.moves.length; ) {
      const item = (this.moves[at] as Move).item
      const next = new Map<string, Units>()
      try {
        for (; at < this.moves.length && (this.moves[at] as Move).item === item; at++) {
          const { kind, id, delta } = this.moves[at] as Move
          const key = `${kind}:${id}`
          const base = next.get(key) ?? running.get(key) ?? start(kind, id)
          if (base !== undefined) next.set(key, addUnits(base, delta, label(kind, id)))
        }
      } catch (error) {
        if (error instanceof ApiError) return { item, error }
        throw error
      }
      for (const [key, value] of next) running.set(key, value)
    }
    return null
  }

  /**
   * Writes the net effect: a change that leaves an account, payee or tag where it was writes
   * nothing to it (so the change feed does not report it), and no intermediate balance can
   * leave the money range on its way to a valid one.
   */
  apply(tenant: Tenant): void {
    for (const [accountId, delta] of this.balances) moveBalance(tenant, accountId, delta)
    for (const [payeeId, { count, spent }] of this.payees) if (count !== 0 || spent !== 0n) adjustPayeeStats(tenant, payeeId, count, spent)
    for (const [tagId, delta] of this.tags) if (delta !== 0) moveTagCount(tenant, tagId, delta)
  }

  private move(accountId: string, delta: Units): void {
    this.balances.set(accountId, (this.balances.get(accountId) ?? 0n) + delta)
    if (delta !== 0n) this.moves.push({ item: this.item, kind: 'account', id: accountId, delta })
  }
}

function moveBalance(tenant: Tenant, accountId: string, delta: Units): void {
  if (delta === 0n) return
  const account = findAccount(tenant, accountId)
  if (!account) throw invalidReference('accountId', accountId)
  setAccountBalance(tenant, accountId, addUnits(account.balance, delta, `The balance of account ${accountId}`))
}
