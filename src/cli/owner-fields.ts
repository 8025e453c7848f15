import { type Flags, optional, UsageError } from './args.ts'
import type { Session } from './session.ts'
import type { FlagSpec } from './spec.ts'

/** The owner profile as flags: what `owner create` and `owner update` accept, checked as the API checks it. */

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const COUNTRY = /^[A-Z]{2}$/
const CURRENCY = /^[A-Z][A-Z0-9]{2,9}$/
const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/

export const PROFILE_FLAGS: FlagSpec[] = [
  { name: 'name', value: 'N', about: "the owner's name (at most 200 characters)" },
  { name: 'email', value: 'E', about: 'an email address' },
  { name: 'country', value: 'CC', about: 'an upper-case ISO 3166-1 alpha-2 code, such as PT' },
  { name: 'currency', value: 'CUR', about: 'the default currency, upper case, such as EUR' },
  { name: 'language', value: 'TAG', about: 'a BCP 47 language tag, such as en or pt-BR' },
  { name: 'tier', value: 'pro|free', about: 'the plan (default pro)' },
]

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

export interface OwnerFields {
  name?: string
  email?: string
  country?: string
  defaultCurrency?: string
  preferredLanguage?: string
  tier?: 'pro' | 'free'
}

/** The owner fields the flags set; absent flags are left out. */
export function ownerFields(flags: Flags): OwnerFields {
  const fields: OwnerFields = {}
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
  const set = (key: keyof OwnerFields, value: string | undefined) => {
    if (value !== undefined) (fields as Record<string, string>)[key] = value
  }
  set('email', checked(flags, 'email', EMAIL, 'an email address'))
  set('country', checked(flags, 'country', COUNTRY, 'an upper-case ISO 3166-1 alpha-2 code such as DE'))
  set('defaultCurrency', checked(flags, 'currency', CURRENCY, 'an upper-case currency code such as EUR'))
  set('preferredLanguage', checked(flags, 'language', LANGUAGE, 'a BCP 47 tag such as en or pt-BR'))
  return fields
}

export function ownerExists(s: Session, id: string): void {
  if (!s.hasData()) throw new UsageError(`no owner with id "${id}": ${s.noData()}`)
  if (!s.control.findOwner(id)) throw new UsageError(`no owner with id "${id}" (see: ${s.invocation.command('owner list')})`)
}
