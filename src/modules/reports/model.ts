import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { CalendarDate, Nullable } from '../../platform/schemas.ts'

/** The spending report (CONTRACT §26): exact sums per group and currency over a date range. */

export const GROUP_BYS = ['category', 'payee', 'month'] as const
export type GroupBy = (typeof GROUP_BYS)[number]

export const MAX_REPORT_GROUPS = 1000

export const SpendingReportQuery = t.Object(
  {
    groupBy: t.Union(
      GROUP_BYS.map((value) => t.Literal(value)),
      {
        description:
          '`category` (a split transaction’s legs by their own category), `payee` (legs by their own payee, else the transaction’s) or `month` (YYYY-MM)',
      },
    ),
    from: CalendarDate,
    to: CalendarDate,
    accountId: t.Optional(t.String({ minLength: 1, description: 'only the transactions of this account' })),
    limit: t.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_REPORT_GROUPS,
        default: MAX_REPORT_GROUPS,
        description: `the most groups to return, 1–${MAX_REPORT_GROUPS} (default ${MAX_REPORT_GROUPS}); the rest are counted in \`omittedGroups\``,
      }),
    ),
  },
  { additionalProperties: false },
)

const Sum = (description: string) => t.Number({ description: `exact decimal: ${description}` })

export const SpendingGroup = t.Object(
  {
    key: Nullable(t.String({ description: 'the category id, the payee id or the month (YYYY-MM); null for the transactions without a category or payee' })),
    name: Nullable(t.String({ description: 'the category’s fullName or the payee’s name; null for a month and for the null key' })),
    currency: t.String({ description: 'the currency of the accounts these amounts are in; amounts are never converted' }),
    spent: Sum('the sum of the expenses (positive amounts), ≥ 0'),
    received: Sum('the sum of the income (negative amounts) as a positive number, ≥ 0'),
    net: Sum('spent − received: the sum of the amounts in the sign convention (positive = net spending)'),
    transactionCount: Type.Integer({ minimum: 0, description: 'how many transactions count here (a split one once per group its legs fall in)' }),
  },
  { title: 'SpendingGroup', additionalProperties: false },
)

export const SpendingReport = t.Object(
  {
    groupBy: t.Union(GROUP_BYS.map((value) => t.Literal(value))),
    from: t.String({ description: 'YYYY-MM-DD, as asked (inclusive)' }),
    to: t.String({ description: 'YYYY-MM-DD, as asked (inclusive)' }),
    accountId: Nullable(t.String()),
    groups: t.Array(SpendingGroup, {
      description: 'by currency, then chronologically for months; for categories and payees the largest spending first (then income, then the key)',
    }),
    omittedGroups: Type.Integer({ minimum: 0, description: 'groups left out by `limit` (0 when every group is listed)' }),
  },
  { title: 'SpendingReport', additionalProperties: false },
)

export const SpendingReportResponse = t.Object({ data: SpendingReport }, { title: 'SpendingReportResponse', additionalProperties: false })

export type SpendingReportInput = typeof SpendingReportQuery.static
export type SpendingGroupOut = typeof SpendingGroup.static
