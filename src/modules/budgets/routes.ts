import { defineRoute } from '../../platform/route.ts'
import {
  BudgetCategoryParams,
  BudgetCategoryPut,
  BudgetMonthParams,
  BudgetMonthPut,
  BudgetPlanResponse,
  BudgetQuery,
  BudgetRangeQuery,
  BudgetResponse,
  BudgetSummariesResponse,
} from './model.ts'
import { budgetSummaries, getBudget, setCategoryPlan, setMonthPlan } from './service.ts'

/** Budgets (CONTRACT §27): `budgets:read` to read them, `budgets:write` to plan. */
const tag = 'Budgets'

const SIGNS =
  'Amounts are exact decimals in pfin’s sign: positive is money out, negative money in, so income is planned (and received) negative, and `remaining` is always planned − spent.'

export const budgetRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/budgets',
    operationId: 'listBudgetSummaries',
    summary: 'Each month’s totals, planned against spent (for charts)',
    description: `One summary per month from \`from\` to \`to\` (at most 24 months), oldest first. ${SIGNS}`,
    tag,
    scopes: ['budgets:read'],
    query: BudgetRangeQuery,
    response: BudgetSummariesResponse,
    statuses: [200],
    errors: ['validation_failed', 'rule_violation'],
    handle: ({ auth, tenant, query }) => ({ status: 200, body: { data: budgetSummaries(tenant, auth.subject, query.from, query.to) } }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/budgets/:month',
    operationId: 'getBudget',
    summary: 'A month’s budget: planned, spent and remaining per category',
    description:
      'Spent is the sum of the month’s transactions in accounts of the budget currency: split transactions count by leg, transfers never count, a category includes the categories below it, and other currencies are reported apart, never converted. ' +
      SIGNS,
    tag,
    scopes: ['budgets:read'],
    params: BudgetMonthParams,
    query: BudgetQuery,
    response: BudgetResponse,
    statuses: [200],
    errors: ['validation_failed', 'rule_violation'],
    // A computed answer: its tag changes with any figure, so a 304 means nothing moved (CONTRACT §27).
    etag: true,
    handle: ({ auth, tenant, params, query }) => ({
      status: 200,
      body: { data: getBudget(tenant, auth.subject, params.month, query.includeUnplanned ?? false) },
    }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/v1/budgets/:month',
    operationId: 'setBudget',
    summary: 'Set a month’s whole plan at once',
    description:
      'The month holds exactly `categories` afterwards, or with `copyFrom`, that month’s plan (its archived categories left out) with `categories` replacing or removing (planned 0) the entries they name. ' +
      `Amounts are in the owner’s defaultCurrency. ${SIGNS} A repeated PUT changes nothing more; Idempotency-Key is optional.`,
    tag,
    scopes: ['budgets:write'],
    params: BudgetMonthParams,
    body: BudgetMonthPut,
    response: BudgetPlanResponse,
    statuses: [200],
    errors: ['invalid_reference', 'rule_violation'],
    requestExample: { copyFrom: '2026-10', categories: [{ categoryId: 'cat_sys_groceries', planned: 450, note: 'two dinners with guests' }] },
    handle: ({ auth, tenant, params, body }) => ({ status: 200, body: { data: setMonthPlan(tenant, auth.subject, params.month, body) } }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/v1/budgets/:month/categories/:categoryId',
    operationId: 'setBudgetCategory',
    summary: 'Set, replace or remove one planned amount',
    description: `Replaces the category’s entry for the month (a note not sent is cleared); \`planned: 0\` removes it. The other categories keep theirs. Amounts are in the owner’s defaultCurrency. ${SIGNS}`,
    tag,
    scopes: ['budgets:write'],
    params: BudgetCategoryParams,
    body: BudgetCategoryPut,
    response: BudgetPlanResponse,
    statuses: [200],
    errors: ['invalid_reference', 'rule_violation'],
    requestExample: { planned: 450 },
    handle: ({ auth, tenant, params, body }) => ({
      status: 200,
      body: { data: setCategoryPlan(tenant, auth.subject, params.month, params.categoryId, body) },
    }),
  }),
]
