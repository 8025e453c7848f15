import type { ApiKeyRow, ControlStore, Owner } from '../db/control/store.ts'
import type { TenantRegistry } from '../db/tenant/registry.ts'
import { profile } from '../db/tenant/schema.ts'
import { mintApiKey } from '../platform/auth.ts'
import { newId } from '../db/ids.ts'
import { DEFAULT_SCOPES, type Scope } from '../platform/scopes.ts'
import { UsageError } from './args.ts'

/** The admin operations behind the CLI, callable from tests with already-checked input. */

export type NewOwner = Omit<Owner, 'id' | 'createdAt' | 'tier'> & { tier?: Owner['tier'] }

export function createOwner(control: ControlStore, tenants: TenantRegistry, input: NewOwner, id = newId('own')): Owner {
  const owner: Owner = { ...input, id, tier: input.tier ?? 'pro', createdAt: Date.now() }
  control.createOwner(owner)
  // The owner's file is made now, with a copy of the profile, so it is complete on its own.
  const { tier: _tier, ...ownProfile } = owner
  tenants.create(owner.id).db.insert(profile).values(ownProfile).onConflictDoNothing().run()
  return owner
}

export interface KeyOptions {
  scopes?: readonly Scope[]
  name?: string | null
  ttlMs?: number | null
}

export type NewKey = {
  id: string
  key: string
  scopes: Scope[]
}

type Minted = Awaited<ReturnType<typeof mintApiKey>>

function keyRow(minted: Minted, ownerId: string, options: KeyOptions, now: number): ApiKeyRow {
  return {
    id: minted.keyId,
    ownerId,
    name: options.name ?? null,
    scopes: [...(options.scopes ?? DEFAULT_SCOPES)],
    secretHash: minted.secretHash,
    createdAt: now,
    lastUsedAt: null,
    expiresAt: options.ttlMs == null ? null : now + options.ttlMs,
    revokedAt: null,
    replacedBy: null,
    namesOwner: 1,
  }
}

export async function createKey(control: ControlStore, input: KeyOptions & { ownerId: string }): Promise<NewKey> {
  const minted = await mintApiKey(input.ownerId)
  const row = keyRow(minted, input.ownerId, input, Date.now())
  control.createKey(row)
  return { id: row.id, key: minted.plaintext, scopes: row.scopes as Scope[] }
}

/**
 * An owner and its first key. The key is minted (the slow, fallible part) before anything is
 * written, so a failure leaves no owner without the key it was asked for.
 */
export async function createOwnerWithKey(
  control: ControlStore,
  tenants: TenantRegistry,
  owner: NewOwner,
  key: KeyOptions,
): Promise<{ owner: Owner; key: NewKey }> {
  const ownerId = newId('own')
  const minted = await mintApiKey(ownerId)
  const created = createOwner(control, tenants, owner, ownerId)
  const row = keyRow(minted, created.id, key, Date.now())
  control.createKey(row)
  return { owner: created, key: { id: row.id, key: minted.plaintext, scopes: row.scopes as Scope[] } }
}

const isLive = (key: ApiKeyRow, now: number) => key.revokedAt === null && (key.expiresAt === null || key.expiresAt > now)

/**
 * Rotation as a person expects it: one live replacement at a time. A key whose replacement
 * (or a later key of its line) still works is not rotated again: two live successors would
 * each be believed the current one. `command` names the command lines in the messages.
 */
function rotatable(control: ControlStore, keyId: string, now: number, command: (args: string) => string): ApiKeyRow {
  const old = control.findKey(keyId)?.key
  // An expired key is not active either: its "rotation" would be a new key born expired.
  if (!old || !isLive(old, now)) {
    throw new UsageError(`no active key with id "${keyId}" (it is unknown, revoked or expired; make a new one: ${command('key create --owner OWNER_ID')})`)
  }
  let live: string | null = null
  const seen = new Set([keyId])
  for (let next = old.replacedBy; next !== null && !seen.has(next); ) {
    seen.add(next)
    const successor: ApiKeyRow | undefined = control.findKey(next)?.key
    if (!successor) break
    if (isLive(successor, now)) live = successor.id
    next = successor.replacedBy
  }
  if (live !== null) {
    throw new UsageError(
      `key ${keyId} was rotated already and ${live} replaces it: rotate ${live} instead (or, if its secret is lost, revoke it first: ${command(`key revoke ${live}`)})`,
    )
  }
  return old
}

export type Rotation = NewKey & {
  expiresAt: number | null
  replaces: string
  oldKeyStopsAt: number
}

/**
 * Makes the replacement of `keyId`, with the same owner, scopes and name. Its expiry is chosen:
 * `expiresInMs` (null: none), or by default the old key's own lifetime again, counted from now;
 * never what is left of a grace period. The old key, and any older key of its line still in
 * its grace period, stops at `graceMs` from now (at once for 0) or at its own expiry if sooner.
 */
export async function rotateKey(
  control: ControlStore,
  input: { keyId: string; graceMs: number; expiresInMs?: number | null; command?: (args: string) => string },
): Promise<Rotation> {
  const command = input.command ?? ((args: string) => args)
  const old = rotatable(control, input.keyId, Date.now(), command)
  let ttlMs = input.expiresInMs
  if (ttlMs === undefined) {
    if (old.expiresAt !== null && old.replacedBy !== null) {
      // Its expiry is now the grace period of an earlier rotation: its own lifetime is not known.
      throw new UsageError(`key ${old.id} ends with the grace period of an earlier rotation: choose the new key's expiry with --expires-in 90d (or never)`)
    }
    ttlMs = old.expiresAt === null ? null : old.expiresAt - old.createdAt
  }
  const minted = await mintApiKey(old.ownerId)
  return control.db.transaction(
    () => {
      // Checked again inside the write lock: two rotations at once make one replacement, not two.
      const now = Date.now()
      const current = rotatable(control, input.keyId, now, command)
      const row = keyRow(minted, current.ownerId, { scopes: current.scopes as Scope[], name: current.name, ttlMs }, now)
      control.createKey(row)
      control.setReplacedBy(current.id, row.id)
      const stopsAt = Math.min(now + input.graceMs, current.expiresAt ?? Number.POSITIVE_INFINITY)
      // The key being rotated and its predecessors still in their grace period: none outlives it.
      const seen = new Set<string>()
      for (let key: ApiKeyRow | undefined = current; key !== undefined && !seen.has(key.id); key = control.predecessorOf(key.id)) {
        seen.add(key.id)
        if (key !== current && !isLive(key, now)) continue
        if (input.graceMs === 0) control.revokeKey(key.id, now)
        else control.expireKeyBy(key.id, stopsAt)
      }
      return { id: row.id, key: minted.plaintext, scopes: row.scopes as Scope[], expiresAt: row.expiresAt, replaces: current.id, oldKeyStopsAt: stopsAt }
    },
    { behavior: 'immediate' },
  )
}

/**
 * Sets a live key's scopes (CONTRACT §2 `key update`). A running server reads the key again
 * when it notices another connection's commit to control.db, so the new scopes hold within a
 * second, for requests already verified as well as new ones.
 */
export function updateKeyScopes(
  control: ControlStore,
  keyId: string,
  scopes: readonly Scope[],
  now: number,
): { id: string; scopes: Scope[]; previousScopes: Scope[] } {
  return control.db.transaction(
    () => {
      const key = control.findKey(keyId)?.key
      if (!key || !isLive(key, now)) throw new UsageError(`no active key with id "${keyId}" (it is unknown, revoked or expired)`)
      control.setScopes(keyId, [...scopes])
      return { id: keyId, scopes: [...scopes], previousScopes: key.scopes as Scope[] }
    },
    { behavior: 'immediate' },
  )
}
