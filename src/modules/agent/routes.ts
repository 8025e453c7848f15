import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { feedState, lastSeq } from '../../db/tenant/change-log.ts'
import { defineRoute } from '../../platform/route.ts'
import { BooleanQuery, EpochMs, Nullable } from '../../platform/schemas.ts'
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
import { UpcomingOccurrence } from '../schedules/model.ts'
import { upcomingIn } from '../schedules/service.ts'
import { Tag } from '../tags/model.ts'
import { allTags } from '../tags/service.ts'
import { newestTransactions } from '../transactions/list.ts'
import { Transaction } from '../transactions/model.ts'

/** A system category in a word: what an agent needs to file a transaction under it. */
const SystemCategorySummary = t.Object(
  {
    id: t.String({ examples: ['cat_sys_groceries'] }),
    fullName: t.String({ description: 'the ancestors’ names and its own, joined with " / "' }),
    type: t.Union([t.Literal('expense'), t.Literal('income'), t.Null()]),
  },
  { title: 'SystemCategorySummary', additionalProperties: false },
)

const AgentContext = t.Object(
  {
    me: Me,
    accounts: t.Array(Account),
    categories: t.Array(Category, {
      description: 'in list order; with systemCategories=summary only the custom ones (the system ones are in systemCategorySummary)',
    }),
    systemCategorySummary: Nullable(
      t.Array(SystemCategorySummary, {
        description: 'with systemCategories=summary: every system category the owner sees, as id, fullName and type; null with systemCategories=full',
      }),
    ),
    payees: t.Array(Payee),
    tags: t.Array(Tag, { description: 'every live tag (archived ones too with includeArchived), oldest first' }),
    rules: t.Array(Rule, { description: 'every active rule (inactive ones too with includeArchived), in the order they run' }),
    importPresets: t.Array(ImportPreset, { description: 'every import preset (how to read a bank’s CSV export), oldest first' }),
    recentTransactions: t.Array(Transaction),
    budget: t.Union([Budget, t.Null()], {
      description:
        'the current month’s budget (UTC), as GET /v1/budgets/{month} gives it; null when the key lacks budgets:read or the owner has no defaultCurrency',
    }),
    upcoming: t.Union([t.Array(UpcomingOccurrence), t.Null()], {
      description:
        'every active schedule’s occurrences from today (UTC) for 30 days, by date, as GET /v1/schedules/upcoming gives them; null when the key lacks schedules:read',
    }),
    serverTime: EpochMs,
  },
  { title: 'AgentContext', additionalProperties: false },
)

const AgentContextQuery = t.Object(
  {
    includeArchived: t.Optional(BooleanQuery('include archived accounts, categories and tags, and inactive rules')),
    systemCategories: t.Optional(
      t.Union([t.Literal('full'), t.Literal('summary')], {
        default: 'full',
        description:
          '`full`: every category whole in `categories`; `summary`: `categories` holds the custom ones and `systemCategorySummary` each system one as id, fullName and type (default full)',
      }),
    ),
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
      'Profile, accounts and categories (in list order), the most-used payees, the tags, the rules, the import presets, the newest transactions (with their legs and tags), the current month’s budget (with `budgets:read`), the next 30 days of scheduled transactions (with `schedules:read`) and the server time, read from one consistent snapshot. ' +
      '`systemCategories=summary` lists the system categories as id, fullName and type only, for a smaller answer.',
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
      const summary = query.systemCategories === 'summary'
      const { data, changesCursor } = tenant.read(() => {
        const categories = listAllCategoriesForContext(tenant, auth.subject.country, includeArchived)
        return {
          data: {
            me: toMe(auth),
            accounts: listAccountRows(tenant, { limit: -1, includeArchived }).map(toAccount),
            categories: summary ? categories.filter((category) => !category.isSystem) : categories,
            systemCategorySummary: summary
              ? categories.filter((category) => category.isSystem).map(({ id, fullName, type }) => ({ id, fullName, type }))
              : null,
            payees: mostUsedPayees(tenant, query.payeeLimit ?? 50).map(toPayee),
            tags: allTags(tenant, includeArchived),
            rules: allRules(tenant, includeArchived),
            importPresets: allPresets(tenant),
            recentTransactions: newestTransactions(tenant, query.recentTransactionLimit ?? 50),
            // Only for a key that may read budgets: the context needs no scope beyond its five.
            budget: auth.principal.scopes.includes('budgets:read') ? budgetOrNull(tenant, auth.subject, currentMonth()) : null,
            // Like the budget: only for a key that may read schedules.
            upcoming: auth.principal.scopes.includes('schedules:read') ? upcomingIn(tenant, 30) : null,
            serverTime: Date.now(),
          },
          // The feed position of this very snapshot: GET /v1/changes from here misses nothing.
          changesCursor: encodeFeedCursor(auth.subject.id, feedState(tenant), lastSeq(tenant)),
        }
      })
      return { status: 200, body: { data }, headers: { 'x-changes-cursor': changesCursor } }
    },
  }),
]
