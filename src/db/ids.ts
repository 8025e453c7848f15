/**
 * Opaque, prefixed, time-ordered ids (CONTRACT §3): `acct_` + a UUIDv7 in hex.
 * Time order keeps new rows at the right edge of every index.
 */
export const ID_PREFIXES = ['own', 'acct', 'txn', 'cat', 'pay', 'key', 'spl', 'tag', 'rul', 'imp', 'app', 'cli', 'grt', 'sch'] as const
export type IdPrefix = (typeof ID_PREFIXES)[number]

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${Bun.randomUUIDv7().replaceAll('-', '')}`
}

const GENERATED = /^(own|acct|txn|cat|pay|key|spl|tag|rul|imp|app|cli|grt|sch)_[0-9a-f]{32}$/

/** True for an id this server generated with the given prefix. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && GENERATED.test(value)
}
