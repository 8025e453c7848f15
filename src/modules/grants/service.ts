import type { LedgerGrant } from '../../db/control/grant-store.ts'
import { isLiveGrant } from '../../db/control/grant-store.ts'
import type { ControlStore } from '../../db/control/store.ts'
import { isId, newId } from '../../db/ids.ts'
import type { AuthContext } from '../../platform/auth.ts'
import { ApiError, notFound } from '../../platform/errors.ts'
import type { Scope } from '../../platform/scopes.ts'
import type { GrantCreateInput, GrantOut } from './model.ts'

/**
 * Households over the API (CONTRACT §30): the key owner's grants, given and received; made and
 * revoked by the subject's side. Never under delegation (the routes are not `delegable`).
 */

/** Live grants one owner may give: a loop must not fill the control database every owner shares. */
export const MAX_LIVE_GRANTS = 100

export function toGrant(grant: LedgerGrant, ownerId: string): GrantOut {
  const { id, subjectOwnerId, granteeOwnerId, scopes, label, createdAt, expiresAt, revokedAt } = grant
  return {
    id,
    direction: subjectOwnerId === ownerId ? 'given' : 'received',
    subjectOwnerId,
    granteeOwnerId,
    scopes: scopes as Scope[],
    label,
    createdAt,
    expiresAt,
    revokedAt,
  }
}

export function listGrants(control: ControlStore, auth: AuthContext, includeRevoked: boolean) {
  const ownerId = auth.principal.owner.id
  const rows = control.grants.list({ subject: ownerId, grantee: ownerId }, includeRevoked, Date.now())
  return { data: rows.map((row) => toGrant(row, ownerId)), nextCursor: null, hasMore: false }
}

export function createGrant(control: ControlStore, auth: AuthContext, body: GrantCreateInput): GrantOut {
  const ownerId = auth.principal.owner.id
  const beyond = body.scopes.filter((scope) => !auth.principal.scopes.includes(scope as Scope))
  if (beyond.length > 0) {
    throw new ApiError('insufficient_scope', `scopes: a grant can carry only scopes the caller holds, and this key lacks ${beyond.join(', ')}`)
  }
  if (body.granteeOwnerId === ownerId)
    throw new ApiError('validation_failed', 'granteeOwnerId: a grant is to another owner; your own keys act on your ledger already')
  if (!isId('own', body.granteeOwnerId) || !control.findOwner(body.granteeOwnerId)) {
    throw new ApiError('invalid_reference', `granteeOwnerId: no owner ${JSON.stringify(body.granteeOwnerId.slice(0, 64))}`)
  }
  const now = Date.now()
  if (control.grants.list({ subject: ownerId }, false, now).length >= MAX_LIVE_GRANTS) {
    throw new ApiError('limit_reached', `An owner may give at most ${MAX_LIVE_GRANTS} live grants; revoke one first`)
  }
  const made = control.grants.create({
    id: newId('grt'),
    subjectOwnerId: ownerId,
    granteeOwnerId: body.granteeOwnerId,
    scopes: [...body.scopes],
    label: body.label?.trim() || null,
    createdAt: now,
    expiresAt: body.expiresIn == null ? null : now + body.expiresIn * 1000,
    revokedAt: null,
  })
  if (!made.created) {
    throw new ApiError(
      'grant_exists',
      `${body.granteeOwnerId} holds a live grant to your ledger already (${made.grant.id}): revoke it first to give other scopes`,
    )
  }
  return toGrant(made.grant, ownerId)
}

/** Revokes a grant the key's owner gave; again: unchanged. A received grant is its giver's to end. */
export function revokeGrant(control: ControlStore, auth: AuthContext, id: string): GrantOut {
  const ownerId = auth.principal.owner.id
  const found = isId('grt', id) ? control.grants.find(id) : undefined
  if (!found || found.subjectOwnerId !== ownerId) throw notFound('Grant', id)
  // The store marks the change: cached delegations are read again before their next use.
  return toGrant(control.grants.revoke(id, Date.now()) as LedgerGrant, ownerId)
}

/** The ledgers the key may act on: its owner's own, then each live grant received, with this key's effective scopes. */
export function listSubjects(control: ControlStore, auth: AuthContext) {
  const owner = auth.principal.owner
  const now = Date.now()
  const keyScopes = auth.principal.keyScopes
  const own = { ownerId: owner.id, name: owner.name, self: true, grantId: null, scopes: [...keyScopes], expiresAt: null }
  const received = control.grants
    .list({ grantee: owner.id }, false, now)
    .filter((grant) => grant.granteeOwnerId === owner.id && isLiveGrant(grant, now))
    .map((grant) => ({
      ownerId: grant.subjectOwnerId,
      name: control.findOwner(grant.subjectOwnerId)?.name ?? null,
      self: false,
      grantId: grant.id,
      scopes: keyScopes.filter((scope) => (grant.scopes as string[]).includes(scope)),
      expiresAt: grant.expiresAt,
    }))
  return { data: [own, ...received], nextCursor: null, hasMore: false }
}
