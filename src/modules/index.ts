import type { AnyRoute } from '../platform/route.ts'
import { accountRoutes } from './accounts/routes.ts'
import { agentRoutes } from './agent/routes.ts'
import { budgetRoutes } from './budgets/routes.ts'
import { categoryRoutes } from './categories/routes.ts'
import { changeRoutes } from './changes/routes.ts'
import { presetRoutes } from './imports/preset-routes.ts'
import { importRoutes } from './imports/routes.ts'
import { grantRoutes } from './grants/routes.ts'
import { keyRoutes } from './keys/routes.ts'
import { meRoutes } from './me/routes.ts'
import { payeeRoutes } from './payees/routes.ts'
import { reportRoutes } from './reports/routes.ts'
import { ruleRunRoutes } from './rule-runs/routes.ts'
import { ruleRoutes } from './rules/routes.ts'
import { scheduleRoutes } from './schedules/routes.ts'
import { tagRoutes } from './tags/routes.ts'
import { transactionRoutes } from './transactions/routes.ts'

/** Every /v1 route, in the order they appear in the API document. */
export const routes: AnyRoute[] = [
  ...meRoutes,
  ...agentRoutes,
  ...accountRoutes,
  ...transactionRoutes,
  ...importRoutes,
  ...categoryRoutes,
  ...payeeRoutes,
  ...tagRoutes,
  ...ruleRoutes,
  ...ruleRunRoutes,
  ...budgetRoutes,
  ...scheduleRoutes,
  ...presetRoutes,
  ...changeRoutes,
  ...reportRoutes,
  ...keyRoutes,
  ...grantRoutes,
]
