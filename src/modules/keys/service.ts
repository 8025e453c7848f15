import type { ApiKeyRow, ControlStore } from '../../db/control/store.ts'
import type { OAuthGrant } from '../../db/control/oauth-store.ts'
import type { AuthContext } from '../../platform/auth.ts'
import { ApiError, notFound } from '../../platform/errors.ts'
import { decodeCursor, page } from '../../platform/pagination.ts'
import type { Scope } from '../../platform/scopes.ts'
import type { ApiKeyCreateInput, ApiKeyOut } from './model.ts'

/**
 * The owner's own keys and signed-in apps (CONTRACT §28): listed together, oldest first; made
 * (keys) with at most the caller's scopes; revoked (keys and grants) within a second everywhere.
 */

/** Live keys one owner may hold: a loop must not fill the control database every owner shares. */
export const MAX_LIVE_KEYS = 100

type Grant = OAuthGrant & { clientName: string }
type Row = { kind: 'key'; row: ApiKeyRow } | { kind: 'oauth'; row: Grant }

function toItem(entry: Row, auth: AuthContext): ApiKeyOut {
  const current = entry.row.id === auth.principal.keyId
  if (entry.kind === 'key') {
    const { id, name, scopes, createdAt, lastUsedAt, expiresAt, revokedAt } = entry.row
    return { id, type: 'key', name, clientId: null, scopes: scopes as Scope[], createdAt, lastUsedAt, expiresAt, revokedAt, current }
  }
  const { id, clientName, clientId, scopes, createdAt, lastUsedAt, expiresAt, revokedAt } = entry.row
  return { id, type: 'oauth', name: clientName, clientId, scopes: scopes as Scope[], createdAt, lastUsedAt, expiresAt, revokedAt, current }
}

export function listKeys(control: ControlStore, auth: AuthContext, query: { limit?: number; cursor?: string; includeRevoked?: boolean }) {
  const limit = query.limit ?? 50
  const key = decodeCursor(query.cursor, 'ns')
  const after = key ? { createdAt: key[0] as number, id: key[1] as string } : null
  const all = query.includeRevoked ?? false
  const now = Date.now()
  const ownerId = auth.subject.id
  // Two index-ordered scans merged: a page holds keys and grants in one order.
  const rows: Row[] = [
    ...control.listKeysPage(ownerId, after, limit + 1, all, now).map((row) => ({ kind: 'key' as const, row })),
    ...control.oauth.listGrants(ownerId, after, limit + 1, all, now).map((row) => ({ kind: 'oauth' as const, row })),
  ].sort((a, b) => a.row.createdAt - b.row.createdAt || (a.row.id < b.row.id ? -1 : 1))
  return page(
    rows.slice(0, limit + 1),
    limit,
    (entry) => [entry.row.createdAt, entry.row.id],
    (entry) => toItem(entry, auth),
  )
}

function find(control: ControlStore, auth: AuthContext, id: string): Row {
  const row = id.startsWith('key_') ? control.findKeyRow(id) : undefined
  if (row && row.ownerId === auth.subject.id) return { kind: 'key', row }
  const grant = id.startsWith('app_') ? control.oauth.findGrant(id) : undefined
  if (grant && grant.ownerId === auth.subject.id) return { kind: 'oauth', row: grant }
  throw notFound('Key', id)
}

export function getKey(control: ControlStore, auth: AuthContext, id: string): ApiKeyOut {
  return toItem(find(control, auth, id), auth)
}

export interface Minted {
  keyId: string
  plaintext: string
  secretHash: string
}

/** Makes a key with the secret `prepare` hashed; inside the control transaction that also keeps the answer. */
export function createKey(control: ControlStore, auth: AuthContext, body: ApiKeyCreateInput, minted: Minted) {
  const held = auth.principal.scopes
  const beyond = body.scopes.filter((scope) => !held.includes(scope as Scope))
  if (beyond.length > 0) {
    throw new ApiError(
      'insufficient_scope',
      `scopes: a key can be given only scopes the caller holds, and this ${auth.principal.kind === 'oauth' ? 'access token' : 'key'} lacks ${beyond.join(', ')}`,
    )
  }
  const now = Date.now()
  const live = control.listKeysPage(auth.subject.id, null, MAX_LIVE_KEYS + 1, false, now).length
  if (live >= MAX_LIVE_KEYS) throw new ApiError('limit_reached', `An owner may have at most ${MAX_LIVE_KEYS} live keys; revoke one first`)
  const row: ApiKeyRow = {
    id: minted.keyId,
    ownerId: auth.subject.id,
    name: body.name.trim(),
    scopes: [...body.scopes],
    secretHash: minted.secretHash,
    createdAt: now,
    lastUsedAt: null,
    expiresAt: body.expiresIn == null ? null : now + body.expiresIn * 1000,
    revokedAt: null,
    replacedBy: null,
    namesOwner: 1,
  }
  control.createKey(row)
  return toItem({ kind: 'key', row }, auth)
}

/** Revokes a key or a grant (every token of it); again: unchanged. A running server stops it at once. */
export function revokeKey(control: ControlStore, auth: AuthContext, id: string): ApiKeyOut {
  const found = find(control, auth, id)
  const now = Date.now()
  if (found.kind === 'key') control.revokeKey(id, now)
  else control.oauth.revokeGrant(id, now)
  // Cached keys and tokens are read again before their next use (the change is this process's own).
  control.commits.changedHere()
  return toItem(find(control, auth, id), auth)
}
