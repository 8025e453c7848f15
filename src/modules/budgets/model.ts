import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { BooleanQuery, Currency, LongText, Money, Nullable, SingleOf } from '../../platform/schemas.ts'

/** Budgets (CONTRACT §27): planned amounts per category and month, against what was spent. */

export const MONTH_PATTERN = '^\\d{4}-(0[1-9]|1[0-2])$'
export const Month = t.String({ pattern: MONTH_PATTERN, description: 'a calendar month, YYYY-MM', examples: ['2026-11'] })

/** The most months `GET /v1/budgets` summarises at once. */
export const MAX_SUMMARY_MONTHS = 24
/** More entries than an owner can have categories (1,000 custom by default, plus the system ones). */
export const MAX_BUDGET_ENTRIES = 2000

const Amount = (description: string) => t.Number({ description: `exact decimal, pfin's sign (positive = money out); ${description}` })
const CategoryType = Nullable(t.Union([t.Literal('expense'), t.Literal('income')]))

const OtherCurrencies = t.Array(t.Object({ currency: t.String(), spent: Amount('in that currency, never converted') }, { additionalProperties: false }), {
  description: 'activity in accounts of other currencies, one entry per currency with any, by code; never converted',
})

export const BudgetCategory = t.Object(
  {
    categoryId: t.String(),
    categoryType: CategoryType,
    parentId: Nullable(t.String()),
    planned: Amount('0 when not planned; income is planned negative'),
    spent: Amount('the month’s transactions and legs in this category and the categories below it, in accounts of the budget currency'),
    remaining: Amount('planned − spent'),
    transactionCount: Type.Integer({ minimum: 0, description: 'the transactions behind `spent`, each counted once' }),
    otherCurrencies: OtherCurrencies,
    note: Nullable(t.String({ description: 'the note of the plan, if any' })),
  },
  { title: 'BudgetCategory', additionalProperties: false },
)

export const BudgetTotals = t.Object(
  {
    plannedExpense: Amount('the plans of expense categories (and untyped ones), a plan inside a planned parent counted once, in the parent'),
    spentExpense: Amount('what expense (and untyped) categories spent, each transaction or leg once'),
    plannedIncome: Amount('the plans of income categories: negative, as income is'),
    receivedIncome: Amount('what income categories received: negative, as income is'),
  },
  { title: 'BudgetTotals', additionalProperties: false },
)

export const Uncategorized = t.Object(
  {
    spent: Amount('transactions and legs without a category, in accounts of the budget currency'),
    transactionCount: Type.Integer({ minimum: 0 }),
    otherCurrencies: OtherCurrencies,
  },
  { title: 'BudgetUncategorized', additionalProperties: false },
)

export const Budget = t.Object(
  {
    month: Month,
    currency: Currency,
    categories: t.Array(BudgetCategory, { description: 'the planned categories (and with includeUnplanned, every one with activity), in category list order' }),
    totals: BudgetTotals,
    uncategorized: Uncategorized,
  },
  { title: 'Budget', additionalProperties: false },
)

export const BudgetSummary = t.Object(
  { month: Month, currency: Currency, totals: BudgetTotals, uncategorized: Uncategorized },
  { title: 'BudgetSummary', additionalProperties: false },
)

/** What was planned for a month, as stored: what a write answers and the change feed carries. */
export const BudgetPlan = t.Object(
  {
    month: Month,
    currency: Currency,
    categories: t.Array(
      t.Object(
        { categoryId: t.String(), planned: Amount('never 0: a removed plan is no entry'), note: Nullable(t.String()) },
        { title: 'BudgetPlanEntry', additionalProperties: false },
      ),
      { description: 'in category list order' },
    ),
  },
  { title: 'BudgetPlan', additionalProperties: false },
)

const Note = t.Optional(Nullable(LongText))
const Planned = Money

export const BudgetCategoryPut = t.Object(
  { planned: Planned, note: Note },
  { title: 'BudgetCategoryPut', additionalProperties: false, description: 'Replaces the entry: a note not sent is cleared; planned 0 removes the entry.' },
)

export const BudgetEntryInput = t.Object({ categoryId: t.String(), planned: Planned, note: Note }, { title: 'BudgetEntryInput', additionalProperties: false })

export const BudgetMonthPut = t.Object(
  {
    categories: t.Array(BudgetEntryInput, {
      maxItems: MAX_BUDGET_ENTRIES,
      description: 'the month’s plan: every category to plan, each once (planned 0: not planned)',
    }),
    copyFrom: t.Optional(
      t.String({
        pattern: MONTH_PATTERN,
        description: 'a calendar month, YYYY-MM, whose plan is copied first; `categories` then replace or remove the entries they name',
        examples: ['2026-10'],
      }),
    ),
  },
  { title: 'BudgetMonthPut', additionalProperties: false },
)

export const BudgetMonthParams = t.Object({ month: Month })
export const BudgetCategoryParams = t.Object({ month: Month, categoryId: t.String() })

export const BudgetQuery = t.Object(
  { includeUnplanned: t.Optional(BooleanQuery('also list every category with activity in the month but no plan')) },
  { additionalProperties: false },
)

export const BudgetRangeQuery = t.Object(
  {
    from: t.String({ pattern: MONTH_PATTERN, description: 'the first month, YYYY-MM', examples: ['2026-01'] }),
    to: t.String({ pattern: MONTH_PATTERN, description: `the last month, YYYY-MM: from ≤ to, at most ${MAX_SUMMARY_MONTHS} months`, examples: ['2026-12'] }),
  },
  { additionalProperties: false },
)

export const BudgetResponse = SingleOf(Budget, 'BudgetResponse')
export const BudgetPlanResponse = SingleOf(BudgetPlan, 'BudgetPlanResponse')
export const BudgetSummariesResponse = t.Object({ data: t.Array(BudgetSummary) }, { title: 'BudgetSummariesResponse', additionalProperties: false })

export type BudgetOut = typeof Budget.static
export type BudgetPlanOut = typeof BudgetPlan.static
export type BudgetSummaryOut = typeof BudgetSummary.static
export type BudgetMonthInput = typeof BudgetMonthPut.static
export type BudgetCategoryInput = typeof BudgetCategoryPut.static
