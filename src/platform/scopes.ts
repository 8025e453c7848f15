/**
 * Route scopes a key can carry (SPEC §5, CONTRACT §2). Keys store their scopes as a list, so a
 * scope added here reaches new keys (`key create` gives all by default) and never widens an
 * existing one: the admin adds it with `key update --scopes`.
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
] as const

export type Scope = (typeof SCOPES)[number]

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
