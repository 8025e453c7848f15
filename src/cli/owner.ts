import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { ControlStore } from '../db/control/store.ts'
import type { TenantRegistry } from '../db/tenant/registry.ts'
import { createOwner } from './admin.ts'
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

function checked(flags: Flags, name: string, pattern: RegExp, what: string, transform = (v: string) => v): string | null {
  const value = optional(flags, name)
  if (value === undefined) return null
  const normal = transform(value)
  if (!pattern.test(normal)) throw new UsageError(`--${name} must be ${what} (got "${value}")`)
  return normal
}

export function ownerExists(control: ControlStore, id: string): void {
  if (!control.findOwner(id)) throw new UsageError(`no owner with id "${id}" (see: owner list)`)
}

export function ownerCommand(ctx: AdminContext, sub: string | undefined, args: string[]): void {
  switch (sub) {
    case 'create': {
      const { flags } = parseFlags(args, ['name', 'email', 'country', 'currency', 'language', 'tier'])
      const name = required(flags, 'name')
      if (name.length > 200) throw new UsageError('--name must be at most 200 characters')
      const tier = optional(flags, 'tier') ?? 'pro'
      if (tier !== 'pro' && tier !== 'free') throw new UsageError(`--tier must be pro or free (got "${tier}")`)
      const owner = createOwner(ctx.control, ctx.tenants, {
        name,
        email: checked(flags, 'email', EMAIL, 'an email address'),
        country: checked(flags, 'country', COUNTRY, 'an ISO 3166-1 alpha-2 code such as DE', (v) => v.toUpperCase()),
        defaultCurrency: checked(flags, 'currency', CURRENCY, 'a currency code such as EUR', (v) => v.toUpperCase()),
        preferredLanguage: checked(flags, 'language', LANGUAGE, 'a BCP 47 tag such as en or pt-BR'),
        tier,
      })
      ctx.out.result({ id: owner.id }, `Created owner ${owner.id} (${name}).\nNext: ${adminCommand()} key create --owner ${owner.id}`)
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
      // VACUUM INTO writes a consistent snapshot, safe while the server is writing.
      ctx.tenants.get(ownerId).sqlite.run('VACUUM INTO ?', [out])
      ctx.out.result({ out }, `Exported ${ownerId} to ${out}`)
      return
    }
    default:
      throw new UsageError(sub ? `unknown command "owner ${sub}"; use create, list or export` : 'owner needs a command: create, list or export')
  }
}
