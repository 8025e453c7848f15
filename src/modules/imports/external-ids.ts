/**
 * The externalIds of imported rows (CONTRACT §24), deterministic so that importing a file again,
 * or an export that overlaps an earlier one, finds the same transactions. They are namespaced by
 * account, since pfin's externalIds are unique per owner while a bank's ids are unique per account:
 * `imp:{accountId}:fitid:{FITID}` (OFX, QFX), `imp:{accountId}:camt:{AcctSvcrRef or NtryRef}`,
 * `imp:{accountId}:ref:{id column}` (CSV), else `imp:{accountId}:row:{date}:{amount in 10⁻⁸}:{n}`,
 * n counting that date and amount within the file (YNAB's import_id).
 */

import { MAX_EXTERNAL_ID } from './limits.ts'

export type IdKind = 'fitid' | 'camt' | 'ref'

/** A bank id too long to fit is replaced by its SHA-256, so the externalId stays within its 200 characters. */
function fitted(prefix: string, id: string): string {
  if (prefix.length + id.length <= MAX_EXTERNAL_ID) return `${prefix}${id}`
  return `${prefix}sha256:${new Bun.CryptoHasher('sha256').update(id).digest('base64url')}`
}

export const bankExternalId = (accountId: string, kind: IdKind, bankId: string) => fitted(`imp:${accountId}:${kind}:`, bankId)

export const rowExternalId = (accountId: string, date: string, units: bigint, n: number) => `imp:${accountId}:row:${date}:${units}:${n}`
