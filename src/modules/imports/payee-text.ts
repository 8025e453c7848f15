import type { Tenant } from '../../db/tenant/tenant.ts'
import { normalizeName } from '../payees/normalize.ts'
import { everyPayeeAlias } from '../payees/queries.ts'

/**
 * The payee an imported row names (CONTRACT §24): a payee whose alias appears in the bank's text
 * as whole words (the longest such alias, then the first), else the text cleaned. Rules, which
 * run later, may still set another (the rules section the rules change adds to the contract).
 */

/** Bank text and aliases compared as words: the payees' normal form (CONTRACT §10) with punctuation as spaces. */
const words = (text: string): string[] =>
  normalizeName(text)
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .split(' ')
    .filter(Boolean)

/** Only the first words of a text are looked at, and aliases of up to this many words: each row costs a bounded number of lookups. */
const MAX_WORDS = 24
const MAX_ALIAS_WORDS = 8
const NAME_LIMIT = 200

export class PayeeMatcher {
  private readonly aliases = new Map<string, string>()
  private longest = 0

  constructor(tenant: Tenant) {
    for (const { alias, name } of everyPayeeAlias(tenant)) {
      const key = words(alias)
      if (key.length === 0 || key.length > MAX_ALIAS_WORDS) continue
      const joined = key.join(' ')
      // Oldest payee first: the first to claim an alias keeps it.
      if (!this.aliases.has(joined)) this.aliases.set(joined, name)
      this.longest = Math.max(this.longest, key.length)
    }
  }

  /** The name of the payee whose alias the text holds, longest alias first. */
  private aliasIn(text: string): string | null {
    if (this.aliases.size === 0) return null
    const found = words(text.slice(0, 40 * MAX_WORDS)).slice(0, MAX_WORDS)
    for (let size = Math.min(this.longest, found.length); size > 0; size--) {
      for (let at = 0; at + size <= found.length; at++) {
        const name = this.aliases.get(found.slice(at, at + size).join(' '))
        if (name !== undefined) return name
      }
    }
    return null
  }

  /**
   * The row's payee: an alias found in its counterparty, else in its description; else its
   * counterparty's text cleaned (the description's, when `descriptionNamesPayee`); else none.
   */
  payeeFor(counterparty: string | null, description: string | null, descriptionNamesPayee: boolean): string | null {
    for (const text of [counterparty, description]) {
      if (text === null) continue
      const name = this.aliasIn(text)
      if (name !== null) return name
    }
    return cleanPayeeText(counterparty ?? (descriptionNamesPayee ? description : null))
  }
}

/** A token of digits and punctuation with three or more digits: a card, store or reference number, a date. */
const isNumberToken = (token: string) => !/\p{L}/u.test(token) && token.replace(/\D/g, '').length >= 3

/**
 * Bank text as a payee name: spaces collapsed, trailing numbers (`STARBUCKS STORE 10234` →
 * `STARBUCKS STORE`) dropped but never every word, cut to a name's 200 characters. Null when
 * nothing would be left that a payee name can hold.
 */
export function cleanPayeeText(text: string | null): string | null {
  if (text === null) return null
  // A name holds 200 characters: more of the text than a few times that is never looked at.
  const tokens = text
    .slice(0, 4 * NAME_LIMIT)
    .replace(/\s+/g, ' ')
    .trim()
    .split(' ')
  while (tokens.length > 1 && isNumberToken(tokens[tokens.length - 1] as string)) tokens.pop()
  const name = [...tokens.join(' ')].slice(0, NAME_LIMIT).join('').trim()
  return normalizeName(name).replace(/[^\p{L}\p{N}]/gu, '') === '' ? null : name
}
