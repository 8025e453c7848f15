import { DEFAULT_SCOPES, isScope, NOT_BY_DEFAULT, SCOPES, type Scope } from '../platform/scopes.ts'
import { createKey, type KeyOptions, rotateKey, updateKeyScopes } from './admin.ts'
import { type Flags, optional, parseDuration, required, UsageError } from './args.ts'
import { lifeState, listedTime } from './output.ts'
import { ownerExists } from './owner-fields.ts'
import type { CommandSpec, FlagSpec, GroupSpec } from './spec.ts'

/**
 * `--scopes a,b`: every item a known scope, once. An empty item (`a,,b`, a trailing comma) or
 * a repeat is refused rather than dropped: it is most often a typo where a scope was meant.
 */
function parseScopes(text: string | undefined, all: boolean): Scope[] {
  if (all && text !== undefined) throw new UsageError('use either --scopes or --all-scopes, not both')
  if (all) return [...SCOPES]
  if (text === undefined) return [...DEFAULT_SCOPES]
  const scopes = text.split(',').map((s) => s.trim())
  if (scopes.some((s) => s === '')) throw new UsageError(`--scopes has an empty item in "${text}"; separate scopes with single commas`)
  const repeated = scopes.find((s, i) => scopes.indexOf(s) !== i)
  if (repeated) throw new UsageError(`--scopes lists ${repeated} more than once`)
  const unknown = scopes.filter((s) => !isScope(s))
  if (unknown.length) throw new UsageError(`unknown scope ${unknown.join(', ')}; known: ${SCOPES.join(', ')}`)
  return scopes as Scope[]
}

/** The flags `key create` and `owner create --with-key` share; `nameFlag` is the key's label flag. */
export function keyFlagSpecs(nameFlag: string): FlagSpec[] {
  return [
    {
      name: 'scopes',
      value: 's1,s2',
      about: `the key's scopes, comma-separated (default: every scope but ${NOT_BY_DEFAULT.join(', ')}: ${DEFAULT_SCOPES.join(', ')})`,
    },
    { name: 'all-scopes', about: `every scope, ${NOT_BY_DEFAULT.join(' and ')} (managing keys) included` },
    { name: nameFlag, value: 'LABEL', about: 'a label for key list (at most 200 characters)' },
    { name: 'expires-in', value: '30d', about: 'the key stops working after this long: 45s, 90m, 12h, 30d, 2w (default: never)' },
  ]
}

export function keyOptions(flags: Flags, nameFlag: string): KeyOptions {
  const scopes = parseScopes(optional(flags, 'scopes'), flags['all-scopes'] === true)
  const name = optional(flags, nameFlag) ?? null
  if (name !== null && name.length > 200) throw new UsageError(`--${nameFlag} must be at most 200 characters`)
  const expiresIn = optional(flags, 'expires-in')
  return { scopes, name, ttlMs: expiresIn === undefined ? null : parseDuration(expiresIn) }
}

const OWNER_FLAG: FlagSpec = { name: 'owner', value: 'ID', about: 'the owner (see: owner list)' }

const create: CommandSpec = {
  name: 'key create',
  summary: 'make an API key for an owner; the key is printed once and never again (only its hash is stored)',
  usage: '--owner ID [--scopes s1,s2 | --all-scopes] [--name LABEL] [--expires-in 30d]',
  flags: [OWNER_FLAG, ...keyFlagSpecs('name')],
  example: 'key create --owner "$OWNER" --scopes me:read,transactions:read --name "budget dashboard" --expires-in 90d',
  dataDir: 'needs',
  notes: 'Prints (--json): {"id", "key", "scopes"}.',
  async run(s, { flags }) {
    const ownerId = required(flags, 'owner')
    const options = keyOptions(flags, 'name')
    ownerExists(s, ownerId)
    const created = await createKey(s.control, { ownerId, ...options })
    s.out.result(created, `Created key ${created.id} with scopes ${created.scopes.join(', ')}.\nThis is the only time the key is shown:\n\n  ${created.key}\n`)
    return 0
  },
}

const list: CommandSpec = {
  name: 'key list',
  summary: "an owner's keys, with no secrets: scopes, last use, expiry, revocation, replacement",
  usage: '--owner ID',
  flags: [OWNER_FLAG],
  example: 'key list --owner "$OWNER"',
  dataDir: 'needs',
  notes: 'Prints (--json): {"keys": [{id, name, scopes, createdAt, lastUsedAt, expiresAt, revokedAt, replacedBy}]} (times in epoch ms).',
  run(s, { flags }) {
    const ownerId = required(flags, 'owner')
    ownerExists(s, ownerId)
    const keys = s.control.listKeys(ownerId).map(({ id, name, scopes, createdAt, lastUsedAt, expiresAt, revokedAt, replacedBy }) => ({
      id,
      name,
      scopes,
      createdAt,
      lastUsedAt,
      expiresAt,
      revokedAt,
      replacedBy,
    }))
    const now = Date.now()
    const lines = keys.map(
      (k) =>
        `${k.id}  ${lifeState(k, now)}  ${k.name ?? '-'}  created ${listedTime(k.createdAt)}  last used ${listedTime(k.lastUsedAt)}  expires ${listedTime(k.expiresAt)}  [${k.scopes.join(',')}]` +
        (k.replacedBy ? `  replaced by ${k.replacedBy}` : ''),
    )
    s.out.result({ keys }, keys.length ? lines.join('\n') : 'No keys for this owner.')
    return 0
  },
}

const revoke: CommandSpec = {
  name: 'key revoke',
  summary: 'stop a key at once (a running server refuses it within a second)',
  usage: 'KEY_ID',
  flags: [],
  positionals: ['KEY_ID'],
  example: 'key revoke key_0193…',
  dataDir: 'needs',
  notes: 'Prints (--json): {"id", "revoked": true}. Revoking a revoked key keeps its first revocation time.',
  run(s, { positionals: [keyId] }) {
    if (!s.control.revokeKey(keyId as string, Date.now())) throw new UsageError(`no key with id "${keyId}"`)
    s.out.result({ id: keyId, revoked: true }, `Revoked ${keyId}; it stops working on its next request.`)
    return 0
  },
}

const update: CommandSpec = {
  name: 'key update',
  summary: "set a key's scopes (a running server honours them within a second); the key and its secret stay the same",
  usage: 'KEY_ID (--scopes s1,s2 | --all-scopes)',
  flags: [
    { name: 'scopes', value: 's1,s2', about: "the key's scopes from now on, comma-separated: the whole list, not an addition" },
    { name: 'all-scopes', about: `every scope, ${SCOPES.length} today (a key made before a scope existed does not get it otherwise)` },
  ],
  positionals: ['KEY_ID'],
  example: 'key update key_0193… --scopes me:read,transactions:read,budgets:read',
  dataDir: 'needs',
  notes: [
    "Replaces the scopes; to add one, list the key's scopes (key list) and the new one. Revoked and expired keys are",
    'not updated (exit 2). Prints (--json): {"id", "scopes", "previousScopes"}.',
  ].join('\n'),
  run(s, { flags, positionals: [keyId] }) {
    if (flags.scopes === undefined && flags['all-scopes'] !== true) throw new UsageError('give the new scopes: --scopes s1,s2 or --all-scopes')
    const scopes = parseScopes(optional(flags, 'scopes'), flags['all-scopes'] === true)
    const updated = updateKeyScopes(s.control, keyId as string, scopes, Date.now())
    s.out.result(updated, `Key ${keyId} now has the scopes ${scopes.join(', ')} (it had ${updated.previousScopes.join(', ') || 'none'}).`)
    return 0
  },
}

const rotate: CommandSpec = {
  name: 'key rotate',
  summary: 'replace a key: a new key with the same owner, scopes and name; the old one keeps working for a grace period, then stops',
  usage: 'KEY_ID [--grace 24h] [--expires-in 90d|never]',
  flags: [
    { name: 'grace', value: '24h', about: 'how long the old key keeps working: 45s, 90m, 12h, 30d, 2w, or 0 for not at all (default 24h)' },
    {
      name: 'expires-in',
      value: '90d',
      about:
        "the new key's expiry from now, or never (default: the old key's own lifetime again, so a 30-day key gets 30 new days; a key that never expired gives one that never expires)",
    },
  ],
  positionals: ['KEY_ID'],
  example: 'key rotate key_0193… --grace 2h --expires-in 90d',
  dataDir: 'needs',
  notes: [
    'A key has one live replacement at a time: rotating a key whose replacement still works is refused (exit 2) and',
    'names the replacement; rotate that one instead. Rotating the replacement also ends the older key by the same time.',
    'The old key stops after the grace period, or at its own expiry if that comes first. Expired or revoked keys are',
    'not rotated (make a new one with key create).',
    'Prints (--json): {"id", "key", "scopes", "expiresAt", "replaces", "oldKeyStopsAt"}.',
  ].join('\n'),
  async run(s, { flags, positionals: [keyId] }) {
    const graceText = optional(flags, 'grace') ?? '24h'
    const graceMs = graceText === '0' ? 0 : parseDuration(graceText, 'grace')
    const expiresIn = optional(flags, 'expires-in')
    const expiresInMs = expiresIn === undefined ? undefined : expiresIn === 'never' ? null : parseDuration(expiresIn)
    const rotated = await rotateKey(s.control, { keyId: keyId as string, graceMs, expiresInMs, command: (args) => s.invocation.command(args) })
    s.out.result(
      rotated,
      `Created key ${rotated.id} with the scopes of ${keyId}; it ${rotated.expiresAt === null ? 'does not expire' : `expires at ${listedTime(rotated.expiresAt)}`}.\n` +
        `This is the only time the key is shown:\n\n  ${rotated.key}\n\n` +
        `${keyId} stops working ${graceMs === 0 ? 'now' : `at ${listedTime(rotated.oldKeyStopsAt)}`}: switch your client to the new key before then.`,
    )
    return 0
  },
}

export const keyGroup: GroupSpec = {
  name: 'key',
  summary: "API keys: made, listed, revoked, given scopes and rotated by the operator; the key's secret is shown once",
  commands: [create, list, revoke, update, rotate],
  example: 'key list --owner "$OWNER"',
}
