/**
 * Whether the account a statement names (OFX ACCTID, camt.053 IBAN) is the pfin account's
 * `accountNumber` (CONTRACT §24): compared without spaces, dashes and dots, in upper case; a
 * masked number (`XXXXXXXXXXXX4821`, `****4821`) matches when its visible end ends the other.
 */

const compact = (text: string) => text.replace(/[\s.\-/]/g, '').toUpperCase()

export function sameAccountNumber(statement: string, accountNumber: string): boolean {
  const a = compact(statement)
  const b = compact(accountNumber)
  if (a === b) return true
  const visible = (text: string) => text.replace(/^[X*•]+/, '')
  const [maskedA, maskedB] = [visible(a), visible(b)]
  if (maskedA !== a && maskedA.length >= 4) return b.endsWith(maskedA)
  if (maskedB !== b && maskedB.length >= 4) return a.endsWith(maskedB)
  return false
}
