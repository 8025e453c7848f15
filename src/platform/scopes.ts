/** Route scopes a key can carry (SPEC §5). */
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
] as const

export type Scope = (typeof SCOPES)[number]

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value)
