import { invalidReference, ruleViolation } from '../../platform/errors.ts'
import { MAX_UNITS, multiplyByRate, readMoney } from '../../platform/money.ts'
import type { TransactionUpdateInput } from './model.ts'
import type { Draft } from './queries.ts'
import type { References } from './references.ts'

/**
 * Transfers (CONTRACT §4): both accounts the owner's and distinct, a positive amount, and the
 * amount credited to the destination, sent or derived from the rate or one currency.
 */

/** Checks a draft's transfer fields, and sets the amount its destination is credited (null when it is no transfer). */
export function resolveTransfer(refs: References, body: TransactionUpdateInput, current: Draft, next: Draft): void {
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
