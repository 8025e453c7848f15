import { existsSync, rmSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { ControlStore } from '../db/control/store.ts'
import type { TenantRegistry } from '../db/tenant/registry.ts'
import { profile } from '../db/tenant/schema.ts'
import { createOwner } from './admin.ts'
import { closest } from '../platform/nearest.ts'
import { type Flags, optional, parseFlags, required, UsageError } from './args.ts'
import { adminCommand } from './invocation.ts'
import type { Output } from './output.ts'

export interface AdminContext {
  control: ControlStore
  tenants: TenantRegistry
  out: Output
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const COUNTRY = /^[A-Z]{2}$/
const CURRENCY = /^[A-Z][A-Z0-9]{2,9}$/
const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/

/**
 * A checked flag: absent → undefined. Values are taken as given, never normalised: the CLI
 * accepts exactly what the API accepts (CONTRACT §3), so `--currency eur` is refused like
 * `"currency": "eur"` is.
 */
function checked(flags: Flags, name: string, pattern: RegExp, what: string): string | undefined {
  const value = optional(flags, name)
  if (value === undefined) return undefined
  if (!pattern.test(value)) throw new UsageError(`--${name} must be ${what} (got "${value}")`)
  return value
}

const PROFILE_FLAGS = ['name', 'email', 'country', 'currency', 'language', 'tier']

/** The owner fields the flags set; absent flags are left out. */
function ownerFields(flags: Flags) {
  const fields: { name?: string; email?: string; country?: string; defaultCurrency?: string; preferredLanguage?: string; tier?: 'pro' | 'free' } = {}
  const name = optional(flags, 'name')
  if (name !== undefined) {
    if (name.length > 200) throw new UsageError('--name must be at most 200 characters')
    fields.name = name
  }
  const tier = optional(flags, 'tier')
  if (tier !== undefined) {
    if (tier !== 'pro' && tier !== 'free') throw new UsageError(`--tier must be pro or free (got "${tier}")`)
    fields.tier = tier
  }
  const set = (key: keyof typeof fields, value: string | undefined) => {
    if (value !== undefined) (fields as Record<string, string>)[key] = value
  }
  set('email', checked(flags, 'email', EMAIL, 'an email address'))
  set('country', checked(flags, 'country', COUNTRY, 'an upper-case ISO 3166-1 alpha-2 code such as DE'))
  set('defaultCurrency', checked(flags, 'currency', CURRENCY, 'an upper-case currency code such as EUR'))
  set('preferredLanguage', checked(flags, 'language', LANGUAGE, 'a BCP 47 tag such as en or pt-BR'))
  return fields
}

export function ownerExists(control: ControlStore, id: string): void {
  if (!control.findOwner(id)) throw new UsageError(`no owner with id "${id}" (see: owner list)`)
}

const OWNER_COMMANDS = ['create', 'list', 'update', 'delete', 'export']

export function suggest(word: string, known: readonly string[]): string {
  const near = closest(word, known)
  return near ? ` (did you mean "${near}"?)` : ''
}

export function ownerCommand(ctx: AdminContext, sub: string | undefined, args: string[]): void {
  switch (sub) {
    case 'create': {
      const { flags } = parseFlags(args, PROFILE_FLAGS)
      const name = required(flags, 'name')
      const fields = ownerFields(flags)
      const owner = createOwner(ctx.control, ctx.tenants, {
        name,
        email: fields.email ?? null,
        country: fields.country ?? null,
        defaultCurrency: fields.defaultCurrency ?? null,
        preferredLanguage: fields.preferredLanguage ?? null,
        tier: fields.tier ?? 'pro',
      })
      ctx.out.result({ id: owner.id }, `Created owner ${owner.id} (${name}).\nNext: ${adminCommand()} key create --owner ${owner.id}`)
      return
    }
    case 'update': {
      const { flags } = parseFlags(args, ['owner', ...PROFILE_FLAGS])
      const ownerId = required(flags, 'owner')
      ownerExists(ctx.control, ownerId)
      const { tier, ...profileFields } = ownerFields(flags)
      if (tier === undefined && Object.keys(profileFields).length === 0)
        throw new UsageError(`owner update needs something to change: ${PROFILE_FLAGS.map((f) => `--${f}`).join(', ')}`)
      // The owner's file keeps its own copy of the profile, so it stays a complete export. It is
      // opened first: a missing or damaged file fails the command before anything has changed.
      const tenant = Object.keys(profileFields).length > 0 ? ctx.tenants.get(ownerId) : undefined
      ctx.control.updateOwner(ownerId, { ...profileFields, ...(tier ? { tier } : {}) })
      tenant?.db.update(profile).set(profileFields).run()
      const owner = ctx.control.findOwner(ownerId)
      ctx.out.result({ owner }, `Updated ${ownerId}; a running server uses the change within a second.`)
      return
    }
    case 'delete': {
      const { flags } = parseFlags(args, ['owner'], ['yes'])
      const ownerId = required(flags, 'owner')
      ownerExists(ctx.control, ownerId)
      const file = ctx.tenants.pathFor(ownerId)
      const keys = ctx.control.listKeys(ownerId).length
      if (flags.yes !== true) {
        ctx.out.result(
          { deleted: false, owner: ownerId, keys, file },
          `Would delete owner ${ownerId}, its ${keys} key(s) and its database ${file}${existsSync(file) ? ` (${statSync(file).size} bytes)` : ''}.\n` +
            `Nothing was deleted. Take a backup or an export first, then run again with --yes.`,
        )
        return
      }
      // Keys first (a running server refuses them within a second), then the file.
      const removed = ctx.control.deleteOwner(ownerId)
      ctx.tenants.evict(ownerId)
      for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
      ctx.out.result({ deleted: true, owner: ownerId, keys: removed.keys, file }, `Deleted owner ${ownerId}, ${removed.keys} key(s) and ${file}.`)
      return
    }
    case 'list': {
      parseFlags(args, [])
      const owners = ctx.control.listOwners().map(({ id, name, email, tier }) => ({ id, name, email, tier }))
      const lines = owners.map((o) => `${o.id}  ${o.tier.padEnd(4)}  ${o.name ?? ''}${o.email ? ` <${o.email}>` : ''}`)
      ctx.out.result({ owners }, owners.length ? lines.join('\n') : `No owners yet. Create one: ${adminCommand()} owner create --name "Your Name"`)
      return
    }
    case 'export': {
      const { flags } = parseFlags(args, ['owner', 'out'])
      const ownerId = required(flags, 'owner')
      ownerExists(ctx.control, ownerId)
      const out = resolve(required(flags, 'out'))
      if (existsSync(out)) throw new UsageError(`--out ${out} already exists; choose a new file`)
      if (!existsSync(dirname(out))) throw new UsageError(`--out: the folder ${dirname(out)} does not exist`)
      if (process.stderr.isTTY && !args.includes('--json')) process.stderr.write(`exporting ${ownerId}…\n`)
      // VACUUM INTO writes a consistent snapshot, safe while the server is writing.
      ctx.tenants.get(ownerId).sqlite.run('VACUUM INTO ?', [out])
      ctx.out.result({ out }, `Exported ${ownerId} to ${out}`)
      return
    }
    default:
      throw new UsageError(
        sub
          ? `unknown command "owner ${sub}"${suggest(sub, OWNER_COMMANDS)}; use ${OWNER_COMMANDS.join(', ')}`
          : `owner needs a command: ${OWNER_COMMANDS.join(', ')}`,
      )
  }
}
