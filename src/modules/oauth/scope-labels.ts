import type { Scope } from '../../platform/scopes.ts'

/** What each scope lets an app do, in the consent page's words. */
export const SCOPE_LABELS: Record<string, string> = {
  'me:read': 'see your profile',
  'accounts:read': 'see your accounts and balances',
  'accounts:write': 'add and change accounts',
  'transactions:read': 'see your transactions and tags',
  'transactions:write': 'add, change and delete transactions and tags',
  'categories:read': 'see your categories',
  'categories:write': 'add and change categories',
  'payees:read': 'see your payees',
  'payees:write': 'add and change payees',
  'budgets:read': 'see your budgets',
  'budgets:write': 'plan and change your budgets',
  'schedules:read': 'see your scheduled transactions',
  'schedules:write': 'add and change scheduled transactions',
  'keys:read': 'see your API keys and signed-in apps',
  'keys:write': 'make and revoke API keys, and sign apps out',
  'grants:read': 'see who may use your ledger, and whose ledgers you may use',
  'grants:write': 'let other people use your ledger, and take that back',
} satisfies Record<Scope, string>
