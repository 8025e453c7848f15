import { ApiError, invalidReference, ruleViolation } from '../../platform/errors.ts'
import { decimalOfUnits, readMoney, type Units } from '../../platform/money.ts'
import { trimmed } from '../../platform/schemas.ts'
import type { PayeeRow } from '../payees/queries.ts'
import type { SplitInputValue } from './model.ts'
import type { References } from './references.ts'
import type { SplitRow } from './split-queries.ts'

/**
 * Splits (CONTRACT §21): a body's `splits` read into legs, and the rules a split transaction
 * keeps. Every refusal names the field, down to the leg (`splits[2].categoryId`).
 */

/** A leg as a write resolves it, before it is stored with an id and its transaction's sort key. */
export type Leg = Pick<SplitRow, 'amount' | 'categoryId' | 'payeeId' | 'note'>

/**
 * Each leg with its amount read exactly and its category and payee checked like the
 * transaction's own (found, or created by name); a leg without `categoryId` takes the default
 * category of its payee, else of the transaction's payee (`payeeId`, already resolved).
 */
export function resolveLegs(refs: References, splits: readonly SplitInputValue[], payeeId: string | null): Leg[] {
  if (splits.length === 1) throw new ApiError('validation_failed', 'splits must hold 2–100 legs, or none to unsplit: one leg would be the transaction itself')
  return splits.map((input, index) => {
    const at = `splits[${index}]`
    const amount = readMoney(input, 'amount', `${at}.amount`)
    if (input.payeeId !== undefined && input.payeeName !== undefined) throw ruleViolation(`${at}: send payeeId or payeeName, not both`)
    let payee: PayeeRow | undefined
    if (input.payeeName !== undefined) payee = refs.payeeNamed(input.payeeName.trim(), `${at}.payeeName`)
    else if (input.payeeId != null) {
      payee = refs.payee(input.payeeId)
      if (!payee) throw invalidReference(`${at}.payeeId`, input.payeeId)
    }
    let categoryId: string | null
    if (input.categoryId !== undefined) {
      if (input.categoryId !== null && !refs.visibleCategory(input.categoryId)) throw invalidReference(`${at}.categoryId`, input.categoryId)
      categoryId = input.categoryId
    } else {
      categoryId = (payee ?? (payeeId === null ? undefined : refs.payee(payeeId)))?.categoryId ?? null
    }
    return { amount, categoryId, payeeId: payee?.id ?? null, note: trimmed(input.note) }
  })
}

/** What a split transaction must be once the body is applied: no transfer, no category of its own, legs that sum to its amount. */
export function assertSplitFits(legs: readonly Leg[], next: { amount: Units; isTransfer: boolean }, amountChangedWithoutSplits: boolean): void {
  if (legs.length === 0) return
  if (next.isTransfer) throw ruleViolation('splits: a transfer cannot be split; send splits: [] to unsplit it first')
  if (amountChangedWithoutSplits) throw ruleViolation('amount: this transaction is split; send splits that sum to the new amount')
  const sum = legs.reduce((total, leg) => total + leg.amount, 0n)
  if (sum !== next.amount) {
    throw ruleViolation(
      `splits: the legs sum to ${decimalOfUnits(sum.toString())}, not to the amount ${decimalOfUnits(next.amount.toString())}; they must sum exactly`,
    )
  }
}

/** Whether two lists of legs say the same (their ids aside): sending the stored legs again changes nothing. */
export function sameLegs(a: readonly Leg[], b: readonly Leg[]): boolean {
  return (
    a.length === b.length &&
    a.every((leg, i) => {
      const other = b[i] as Leg
      return leg.amount === other.amount && leg.categoryId === other.categoryId && leg.payeeId === other.payeeId && leg.note === other.note
    })
  )
}
