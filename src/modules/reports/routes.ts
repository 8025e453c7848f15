import { defineRoute } from '../../platform/route.ts'
import { SpendingReportQuery, SpendingReportResponse } from './model.ts'
import { spendingReport } from './service.ts'

export const reportRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/reports/spending',
    operationId: 'getSpendingReport',
    summary: 'Spending and income over a date range, by category, payee or month',
    description:
      'Exact sums per group and currency (amounts are never converted): `spent` (expenses), `received` (income, as a positive number), `net` and `transactionCount`. ' +
      'Transfers are left out; a split transaction counts by its legs, each in the group of its own category or payee. `from` and `to` are inclusive; one pass over the range.',
    tag: 'Reports',
    scopes: ['transactions:read'],
    query: SpendingReportQuery,
    response: SpendingReportResponse,
    statuses: [200],
    errors: ['validation_failed'],
    handle: ({ tenant, query }) => ({ status: 200, body: spendingReport(tenant, query) }),
  }),
]
