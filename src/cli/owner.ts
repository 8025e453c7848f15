import { existsSync, rmSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { profile } from '../db/tenant/schema.ts'
import { DEFAULT_SCOPES, SCOPES } from '../platform/scopes.ts'
import { createOwner, createOwnerWithKey, type NewKey, type NewOwner } from './admin.ts'
import { type Flags, required, UsageError } from './args.ts'
import { keyFlagSpecs, keyOptions } from './key.ts'
import { ownerExists, ownerFields, PROFILE_FLAGS } from './owner-fields.ts'
import { invite, setPassword } from './password.ts'
import type { Session } from './session.ts'
import type { CommandSpec, FlagSpec, GroupSpec } from './spec.ts'

const OWNER_FLAG: FlagSpec = { name: 'owner', value: 'ID', about: 'the owner (see: owner list)' }
const KEY_FLAGS = keyFlagSpecs('key-name')

function newOwner(flags: Flags): NewOwner {
  const name = required(flags, 'name')
  const fields = ownerFields(flags)
  return {
    name,
    email: fields.email ?? null,
    country: fields.country ?? null,
    defaultCurrency: fields.defaultCurrency ?? null,
    preferredLanguage: fields.preferredLanguage ?? null,
    tier: fields.tier ?? 'pro',
  }
}

/**
 * `--with-key` without --json: stdout holds exactly `export PFIN_API_KEY=…`, so that
 * `eval "$(… owner create --name N --with-key)"` sets the variable; what a person reads goes to
 * stderr, which eval leaves on the terminal. The key's characters (`pfk_`, hex, base64url)
 * need no quoting in the shell.
 */
function printFirstKey(s: Session, ownerId: string, name: string, key: NewKey, expiresAt: number | null): void {
  process.stdout.write(`export PFIN_API_KEY=${key.key}\n`)
  const scopes =
    key.scopes.length === SCOPES.length
      ? 'every scope'
      : key.scopes.length === DEFAULT_SCOPES.length && DEFAULT_SCOPES.every((scope) => key.scopes.includes(scope))
        ? 'the default scopes (all but keys:read and keys:write)'
        : `the scopes ${key.scopes.join(', ')}`
  const port = s.config.port === 0 ? '<the port the server printed>' : String(s.config.port)
  const lines = [
    `Created owner ${ownerId} (${name}) and its first API key, ${key.id}, with ${scopes}; ${expiresAt === null ? 'it does not expire' : `it expires at ${new Date(expiresAt).toISOString()}`}.`,
    `The key is printed once, on stdout, as an export line: it cannot be shown again (another key: ${s.invocation.command(`key create --owner ${ownerId}`)}).`,
  ]
  if (process.stdout.isTTY) lines.push('To set PFIN_API_KEY in this shell, paste the export line above.')
  lines.push('Next, with the server running:', `  curl -s http://localhost:${port}/v1/me -H "Authorization: Bearer $PFIN_API_KEY"`)
  process.stderr.write(`${lines.join('\n')}\n`)
}

const create: CommandSpec = {
  name: 'owner create',
  summary: 'make an owner (a person whose money pfin keeps), with its own database file; --with-key also makes its first API key',
  usage:
    '--name N [--email E] [--country CC] [--currency CUR] [--language TAG] [--tier pro|free] [--with-key [--scopes s1,s2 | --all-scopes] [--key-name LABEL] [--expires-in 30d]]',
  flags: [
    ...PROFILE_FLAGS,
    { name: 'with-key', about: 'also make the owner\'s first API key; stdout is then only "export PFIN_API_KEY=…" (for eval)' },
    ...KEY_FLAGS.map((flag) => ({ ...flag, about: `with --with-key: ${flag.about}` })),
  ],
  example: (invocation) => `eval "$(${invocation.quiet().command('owner create --name "Ana" --with-key')})"`,
  dataDir: 'creates',
  notes: [
    'Prints (--json): {"id"}; with --with-key {"id", "key": {"id", "key", "scopes"}}.',
    'With --with-key and without --json, stdout is exactly one line, export PFIN_API_KEY=pfk_…, and stderr says',
    'what was made, that the key is shown only this once, and the curl command to try next (the port from PORT).',
  ].join('\n'),
  async run(s, { flags }) {
    const owner = newOwner(flags)
    if (flags['with-key'] !== true) {
      const given = KEY_FLAGS.find((flag) => flags[flag.name] !== undefined)
      if (given) throw new UsageError(`--${given.name} goes with --with-key (or make the key later with key create)`)
      const created = createOwner(s.control, s.tenants, owner)
      s.out.result({ id: created.id }, `Created owner ${created.id} (${owner.name}).\nNext: ${s.invocation.command(`key create --owner ${created.id}`)}`)
      return 0
    }
    const options = keyOptions(flags, 'key-name')
    const made = await createOwnerWithKey(s.control, s.tenants, owner, options)
    if (s.json) s.out.result({ id: made.owner.id, key: made.key }, '')
    else printFirstKey(s, made.owner.id, owner.name as string, made.key, options.ttlMs == null ? null : made.owner.createdAt + options.ttlMs)
    return 0
  },
}

const list: CommandSpec = {
  name: 'owner list',
  summary: 'every owner, oldest first',
  usage: '',
  flags: [],
  example: 'owner list',
  dataDir: 'needs',
  notes: 'Prints (--json): {"owners": [{id, name, email, tier}]}.',
  run(s) {
    // A data folder with no control.db yet has no owners; reading it must not create one.
    const owners = s.hasData() ? s.control.listOwners().map(({ id, name, email, tier }) => ({ id, name, email, tier })) : []
    const lines = owners.map((o) => `${o.id}  ${o.tier.padEnd(4)}  ${o.name ?? ''}${o.email ? ` <${o.email}>` : ''}`)
    s.out.result(
      { owners },
      owners.length ? lines.join('\n') : `No owners yet. Create one: ${s.invocation.command('owner create --name "Your Name" --with-key')}`,
    )
    return 0
  },
}

const update: CommandSpec = {
  name: 'owner update',
  summary: "change an owner's profile or tier (a running server uses the change within a second)",
  usage: '--owner ID [--name N] [--email E] [--country CC] [--currency CUR] [--language TAG] [--tier pro|free]',
  flags: [OWNER_FLAG, ...PROFILE_FLAGS],
  example: 'owner update --owner "$OWNER" --tier free',
  dataDir: 'needs',
  notes: 'Prints (--json): {"owner": {…}}.',
  run(s, { flags }) {
    const ownerId = required(flags, 'owner')
    ownerExists(s, ownerId)
    const { tier, ...profileFields } = ownerFields(flags)
    if (tier === undefined && Object.keys(profileFields).length === 0)
      throw new UsageError(`owner update needs something to change: ${PROFILE_FLAGS.map((f) => `--${f.name}`).join(', ')}`)
    // The owner's file keeps its own copy of the profile, so it stays a complete export. It is
    // opened first: a missing or damaged file fails the command before anything has changed.
    const tenant = Object.keys(profileFields).length > 0 ? s.tenants.get(ownerId) : undefined
    s.control.updateOwner(ownerId, { ...profileFields, ...(tier ? { tier } : {}) })
    tenant?.db.update(profile).set(profileFields).run()
    s.out.result({ owner: s.control.findOwner(ownerId) }, `Updated ${ownerId}; a running server uses the change within a second.`)
    return 0
  },
}

const remove: CommandSpec = {
  name: 'owner delete',
  summary: 'delete an owner, its keys and its database file; without --yes only shows what it would delete',
  usage: '--owner ID [--yes]',
  flags: [OWNER_FLAG, { name: 'yes', about: 'really delete (without it: show what would be deleted, change nothing, exit 2)' }],
  example: 'owner delete --owner "$OWNER" --yes',
  dataDir: 'needs',
  notes: 'Prints (--json): {"deleted", "owner", "keys", "file"}. Take a backup (or owner export) first: nothing keeps a copy.',
  run(s, { flags }) {
    const ownerId = required(flags, 'owner')
    ownerExists(s, ownerId)
    const file = s.tenants.pathFor(ownerId)
    const keys = s.control.listKeys(ownerId).length
    if (flags.yes !== true) {
      s.out.result(
        { deleted: false, owner: ownerId, keys, file },
        `Would delete owner ${ownerId}, its ${keys} key(s) and its database ${file}${existsSync(file) ? ` (${statSync(file).size} bytes)` : ''}.`,
      )
      // Not done is not success: a script must not carry on as if the owner were gone.
      process.stderr.write(
        `pfin: nothing was deleted; take a backup or an export first, then: ${s.invocation.command(`owner delete --owner ${ownerId} --yes`)}\n`,
      )
      return 2
    }
    // Keys first (a running server refuses them within a second), then the file.
    const removed = s.control.deleteOwner(ownerId)
    s.tenants.evict(ownerId)
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
    s.out.result({ deleted: true, owner: ownerId, keys: removed.keys, file }, `Deleted owner ${ownerId}, ${removed.keys} key(s) and ${file}.`)
    return 0
  },
}

const exportOwner: CommandSpec = {
  name: 'owner export',
  summary: "a consistent copy of the owner's database file (VACUUM INTO), safe while the server runs",
  usage: '--owner ID --out FILE',
  flags: [OWNER_FLAG, { name: 'out', value: 'FILE', about: 'the new file to write; it must not exist, its folder must' }],
  example: 'owner export --owner "$OWNER" --out ana.db',
  dataDir: 'needs',
  notes: 'Prints (--json): {"out"} (the absolute path).',
  run(s, { flags }) {
    const ownerId = required(flags, 'owner')
    const out = resolve(required(flags, 'out'))
    ownerExists(s, ownerId)
    if (existsSync(out)) throw new UsageError(`--out ${out} already exists; choose a new file`)
    if (!existsSync(dirname(out))) throw new UsageError(`--out: the folder ${dirname(out)} does not exist`)
    if (process.stderr.isTTY && !s.json) process.stderr.write(`exporting ${ownerId}…\n`)
    // VACUUM INTO writes a consistent snapshot, safe while the server is writing.
    s.tenants.get(ownerId).sqlite.run('VACUUM INTO ?', [out])
    s.out.result({ out }, `Exported ${ownerId} to ${out}`)
    return 0
  },
}

export const ownerGroup: GroupSpec = {
  name: 'owner',
  summary: 'owners: the people whose money pfin keeps, each in a database file of its own',
  commands: [create, list, update, remove, exportOwner, setPassword, invite],
  example: 'owner list',
}
