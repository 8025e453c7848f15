/**
 * Route scopes a key can carry (SPEC §5; CONTRACT §2, §5, §28). Keys store their scopes as a list,
 * so a scope added here reaches new keys (`key create` gives every default scope) and never widens
 * an existing one: the admin adds it with `key update --scopes`.
 */
export const SCOPES = [
  'me:read',
  'accounts:read',
  'accounts:write',
  'transactions:read',
  'transactions:write',
  'categories:read',
  'categories:write',
  'payees:read',
  'payees:write',
  'budgets:read',
  'budgets:write',
  // Scheduled transactions: no route needs them yet.
  'schedules:read',
  'schedules:write',
  'keys:read',
  'keys:write',
  'grants:read',
  'grants:write',
] as const

export type Scope = (typeof SCOPES)[number]

/**
 * Scopes a key gets only when asked for by name (`--scopes`, `--all-scopes`, an OAuth client's
 * `scope`): the ones over credentials. A key that can make keys can outlive its own revocation,
 * so no key or sign-in gets that power without someone choosing it (CONTRACT §2, §28).
 */
export const NOT_BY_DEFAULT: readonly Scope[] = ['keys:read', 'keys:write', 'grants:read', 'grants:write']

/**
 * Scopes over the key owner's own credentials and grants (CONTRACT §30): a grant never carries
 * them, so a delegated request never manages keys or grants (no re-delegation).
 */
export const NOT_GRANTABLE: readonly Scope[] = NOT_BY_DEFAULT

/** What a grant may carry: every scope over a ledger's data. */
export const GRANTABLE_SCOPES: readonly Scope[] = SCOPES.filter((scope) => !NOT_GRANTABLE.includes(scope))

/** The roles of CONTRACT §30, as the scope sets they stand for. */
export const VIEWER_SCOPES: readonly Scope[] = GRANTABLE_SCOPES.filter((scope) => scope.endsWith(':read'))
export const EDITOR_SCOPES: readonly Scope[] = [
  ...VIEWER_SCOPES,
  ...GRANTABLE_SCOPES.filter((scope) => scope.endsWith(':write') && scope !== 'accounts:write' && scope !== 'categories:write'),
]

/** What a key or an OAuth grant gets when no scopes are named: every scope but `NOT_BY_DEFAULT`. */
export const DEFAULT_SCOPES: readonly Scope[] = SCOPES.filter((scope) => !NOT_BY_DEFAULT.includes(scope))

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value)

/** Whether `held` includes every scope of `needed` (a loop, no allocation: it runs on every request). */
export function hasAllScopes(held: readonly Scope[], needed: readonly Scope[]): boolean {
  for (const scope of needed) if (!held.includes(scope)) return false
  return true
}

export function hasAnyScope(held: readonly Scope[], offered: readonly Scope[]): boolean {
  for (const scope of offered) if (held.includes(scope)) return true
  return false
}

/** Whether a key may call a route: every scope it lists, or one of them when any will do. */
export function mayCall(held: readonly Scope[], route: { scopes: readonly Scope[]; scopesNeeded?: 'all' | 'any' }): boolean {
  return route.scopesNeeded === 'any' ? hasAnyScope(held, route.scopes) : hasAllScopes(held, route.scopes)
}
