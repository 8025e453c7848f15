import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { feedState, lastSeq } from '../../db/tenant/change-log.ts'
import { defineRoute } from '../../platform/route.ts'
import { BooleanQuery, EpochMs } from '../../platform/schemas.ts'
import { Account } from '../accounts/model.ts'
import { listAccountRows, toAccount } from '../accounts/queries.ts'
import { Budget } from '../budgets/model.ts'
import { budgetOrNull, currentMonth } from '../budgets/service.ts'
import { Category } from '../categories/model.ts'
import { listAllCategoriesForContext } from '../categories/service.ts'
import { encodeFeedCursor } from '../changes/cursor.ts'
import { ImportPreset } from '../imports/preset-model.ts'
import { allPresets } from '../imports/presets.ts'
import { Me, toMe } from '../me/model.ts'
import { Payee } from '../payees/model.ts'
import { Rule } from '../rules/model.ts'
import { allRules } from '../rules/service.ts'
import { mostUsedPayees, toPayee } from '../payees/queries.ts'
import { Tag } from '../tags/model.ts'
import { allTags } from '../tags/service.ts'
import { newestTransactions } from '../transactions/list.ts'
import { Transaction } from '../transactions/model.ts'

const AgentContext = t.Object(
  {
    me: Me,
    accounts: t.Array(Account),
    categories: t.Array(Category),
    payees: t.Array(Payee),
    tags: t.Array(Tag, { description: 'every live tag (archived ones too with includeArchived), oldest first' }),
    rules: t.Array(Rule, { description: 'every active rule (inactive ones too with includeArchived), in the order they run' }),
    importPresets: t.Array(ImportPreset, { description: 'every import preset (how to read a bank’s CSV export), oldest first' }),
    recentTransactions: t.Array(Transaction),
    budget: t.Union([Budget, t.Null()], {
      description:
        'the current month’s budget (UTC), as GET /v1/budgets/{month} gives it; null when the key lacks budgets:read or the owner has no defaultCurrency',
    }),
    serverTime: EpochMs,
  },
  { title: 'AgentContext', additionalProperties: false },
)

const AgentContextQuery = t.Object(
  {
    includeArchived: t.Optional(BooleanQuery('include archived accounts, categories and tags, and inactive rules')),
    payeeLimit: t.Optional(Type.Integer({ minimum: 0, maximum: 500, default: 50, description: 'most-used payees to include, 0–500 (default 50)' })),
    recentTransactionLimit: t.Optional(
      Type.Integer({ minimum: 0, maximum: 500, default: 50, description: 'newest transactions to include, 0–500 (default 50)' }),
    ),
  },
  { additionalProperties: false },
)

export const agentRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/agent/context',
    operationId: 'getAgentContext',
    summary: 'Everything an automated agent should read before it changes anything',
    description:
      'Profile, accounts and categories (in list order), the most-used payees, the tags, the rules, the import presets, the newest transactions (with their legs and tags), the current month’s budget (with `budgets:read`) and the server time, read from one consistent snapshot.',
    tag: 'Profile',
    scopes: ['me:read', 'accounts:read', 'categories:read', 'payees:read', 'transactions:read'],
    query: AgentContextQuery,
    response: t.Object({ data: AgentContext }, { title: 'AgentContextResponse', additionalProperties: false }),
    statuses: [200],
    errors: ['validation_failed'],
    responseHeaders: {
      'X-Changes-Cursor': {
        description: 'the change-feed position of this snapshot: pass it as `cursor` to GET /v1/changes to get what changed since',
        schema: { type: 'string' },
      },
    },
    handle: ({ auth, tenant, query }) => {
      const includeArchived = query.includeArchived ?? false
      const { data, changesCursor } = tenant.read(() => ({
        data: {
          me: toMe(auth),
          accounts: listAccountRows(tenant, { limit: -1, includeArchived }).map(toAccount),
          categories: listAllCategoriesForContext(tenant, auth.subject.country, includeArchived),
          payees: mostUsedPayees(tenant, query.payeeLimit ?? 50).map(toPayee),
          tags: allTags(tenant, includeArchived),
          rules: allRules(tenant, includeArchived),
          importPresets: allPresets(tenant),
          recentTransactions: newestTransactions(tenant, query.recentTransactionLimit ?? 50),
          // Only for a key that may read budgets: the context needs no scope beyond its five.
          budget: auth.principal.scopes.includes('budgets:read') ? budgetOrNull(tenant, auth.subject, currentMonth()) : null,
          serverTime: Date.now(),
        },
        // The feed position of this very snapshot: GET /v1/changes from here misses nothing.
        changesCursor: encodeFeedCursor(auth.subject.id, feedState(tenant), lastSeq(tenant)),
      }))
      return { status: 200, body: { data }, headers: { 'x-changes-cursor': changesCursor } }
    },
  }),
]
