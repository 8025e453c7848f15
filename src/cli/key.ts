import { createKey } from './admin.ts'
import { isScope, SCOPES, type Scope } from '../platform/scopes.ts'
import { optional, parseDuration, parseFlags, required, UsageError } from './args.ts'
import { type AdminContext, ownerExists, suggest } from './owner.ts'

function parseScopes(text: string | undefined, all: boolean): Scope[] {
  if (all && text !== undefined) throw new UsageError('use either --scopes or --all-scopes, not both')
  if (all || text === undefined) return [...SCOPES]
  const scopes = [
    ...new Set(
      text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ]
  if (scopes.length === 0) throw new UsageError('--scopes needs at least one scope')
  const unknown = scopes.filter((s) => !isScope(s))
  if (unknown.length) throw new UsageError(`unknown scope ${unknown.join(', ')}; known: ${SCOPES.join(', ')}`)
  return scopes as Scope[]
}

const iso = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString())

const KEY_COMMANDS = ['create', 'list', 'revoke', 'rotate']

export async function keyCommand(ctx: AdminContext, sub: string | undefined, args: string[]): Promise<void> {
  switch (sub) {
    case 'create': {
      const { flags } = parseFlags(args, ['owner', 'scopes', 'name', 'expires-in'], ['all-scopes'])
      const ownerId = required(flags, 'owner')
      const scopes = parseScopes(optional(flags, 'scopes'), flags['all-scopes'] === true)
      const name = optional(flags, 'name') ?? null
      if (name !== null && name.length > 200) throw new UsageError('--name must be at most 200 characters')
      const expiresIn = optional(flags, 'expires-in')
      const ttl = expiresIn === undefined ? null : parseDuration(expiresIn)
      ownerExists(ctx.control, ownerId)
      const created = await createKey(ctx.control, { ownerId, scopes, name, ttlMs: ttl })
      ctx.out.result(created, `Created key ${created.id} with scopes ${scopes.join(', ')}.\nThis is the only time the key is shown:\n\n  ${created.key}\n`)
      return
    }
    case 'list': {
      const { flags } = parseFlags(args, ['owner'])
      const ownerId = required(flags, 'owner')
      ownerExists(ctx.control, ownerId)
      const keys = ctx.control
        .listKeys(ownerId)
        .map(({ id, name, scopes, createdAt, lastUsedAt, expiresAt, revokedAt }) => ({ id, name, scopes, createdAt, lastUsedAt, expiresAt, revokedAt }))
      const lines = keys.map(
        (k) =>
          `${k.id}  ${k.revokedAt ? 'revoked' : 'active '}  ${k.name ?? '-'}  created ${iso(k.createdAt)}  last used ${iso(k.lastUsedAt)}  expires ${iso(k.expiresAt)}  [${k.scopes.join(',')}]`,
      )
      ctx.out.result({ keys }, keys.length ? lines.join('\n') : 'No keys for this owner.')
      return
    }
    case 'revoke': {
      const { positionals } = parseFlags(args, [])
      const [keyId, ...extra] = positionals
      if (!keyId || extra.length) throw new UsageError('usage: key revoke KEY_ID')
      if (!ctx.control.revokeKey(keyId, Date.now())) throw new UsageError(`no key with id "${keyId}"`)
      ctx.out.result({ id: keyId, revoked: true }, `Revoked ${keyId}; it stops working on its next request.`)
      return
    }
    case 'rotate': {
      const { flags, positionals } = parseFlags(args, ['grace'])
      const [keyId, ...extra] = positionals
      if (!keyId || extra.length) throw new UsageError('usage: key rotate KEY_ID [--grace 24h]')
      const old = ctx.control.findKey(keyId)
      const now = Date.now()
      // An expired key is not active either: its "rotation" would be a new key born expired.
      if (!old || old.key.revokedAt !== null || (old.key.expiresAt !== null && old.key.expiresAt <= now)) {
        throw new UsageError(`no active key with id "${keyId}" (it is unknown, revoked or expired; make a new one with key create)`)
      }
      const graceText = optional(flags, 'grace') ?? '24h'
      const graceMs = graceText === '0' ? 0 : parseDuration(graceText, 'grace')
      const created = await createKey(ctx.control, {
        ownerId: old.key.ownerId,
        scopes: old.key.scopes as Scope[],
        name: old.key.name,
        ttlMs: old.key.expiresAt === null ? null : Math.max(0, old.key.expiresAt - Date.now()),
      })
      // The old key never outlives its own expiry: the grace period only shortens what it has left.
      const oldStopsAt = Math.min(Date.now() + graceMs, old.key.expiresAt ?? Number.POSITIVE_INFINITY)
      if (graceMs === 0) ctx.control.revokeKey(keyId, oldStopsAt)
      else ctx.control.expireKeyBy(keyId, oldStopsAt)
      ctx.out.result(
        { ...created, replaces: keyId, oldKeyStopsAt: oldStopsAt },
        `Created key ${created.id} with the scopes of ${keyId}.\nThis is the only time the key is shown:\n\n  ${created.key}\n\n` +
          `${keyId} stops working ${graceMs === 0 ? 'now' : `at ${new Date(oldStopsAt).toISOString()}`}: switch your client to the new key before then.`,
      )
      return
    }
    default:
      throw new UsageError(
        sub ? `unknown command "key ${sub}"${suggest(sub, KEY_COMMANDS)}; use ${KEY_COMMANDS.join(', ')}` : `key needs a command: ${KEY_COMMANDS.join(', ')}`,
      )
  }
}
