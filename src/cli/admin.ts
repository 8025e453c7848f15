import type { ControlStore, Owner } from '../db/control/store.ts'
import type { TenantRegistry } from '../db/tenant/registry.ts'
import { profile } from '../db/tenant/schema.ts'
import { mintApiKey } from '../platform/auth.ts'
import { newId } from '../db/ids.ts'
import { SCOPES, type Scope } from '../platform/scopes.ts'

/** The admin operations behind the CLI, callable from tests with already-checked input. */

export type NewOwner = Omit<Owner, 'id' | 'createdAt' | 'tier'> & { tier?: Owner['tier'] }

export function createOwner(control: ControlStore, tenants: TenantRegistry, input: NewOwner): Owner {
  const owner: Owner = { ...input, id: newId('own'), tier: input.tier ?? 'pro', createdAt: Date.now() }
  control.createOwner(owner)
  // The owner's file is made now, with a copy of the profile, so it is complete on its own.
  const { tier: _tier, ...ownProfile } = owner
  tenants.create(owner.id).db.insert(profile).values(ownProfile).onConflictDoNothing().run()
  return owner
}

export async function createKey(
  control: ControlStore,
  input: { ownerId: string; scopes?: readonly Scope[]; name?: string | null; ttlMs?: number | null },
): Promise<{ id: string; key: string; scopes: Scope[] }> {
  const minted = await mintApiKey()
  const now = Date.now()
  const scopes = [...(input.scopes ?? SCOPES)]
  control.createKey({
    id: minted.keyId,
    ownerId: input.ownerId,
    name: input.name ?? null,
    scopes,
    secretHash: minted.secretHash,
    createdAt: now,
    lastUsedAt: null,
    expiresAt: input.ttlMs == null ? null : now + input.ttlMs,
    revokedAt: null,
  })
  return { id: minted.keyId, key: minted.plaintext, scopes }
}
