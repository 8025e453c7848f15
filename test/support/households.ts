import type { ControlStore } from '../../src/db/control/store.ts'
import { newId } from '../../src/db/ids.ts'
import type { Scope } from '../../src/platform/scopes.ts'

/**
 * A live household grant written straight into control.db, as `pfin grant create` writes one
 * (CONTRACT §30): `subjectId` shares its ledger with `granteeId` under `scopes`. Returns the
 * grant's id; throws when a live grant between the two exists already.
 */
export function grantNow(control: ControlStore, subjectId: string, granteeId: string, scopes: readonly Scope[], expiresAt: number | null = null): string {
  const id = newId('grt')
  const made = control.grants.create({
    id,
    subjectOwnerId: subjectId,
    granteeOwnerId: granteeId,
    scopes: [...scopes],
    label: null,
    createdAt: Date.now(),
    expiresAt,
    revokedAt: null,
  })
  if (!made.created) throw new Error(`a live grant exists already: ${made.grant.id}`)
  return id
}
