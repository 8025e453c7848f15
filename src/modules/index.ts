import type { AnyRoute } from '../platform/route.ts'
import { accountRoutes } from './accounts/routes.ts'
import { agentRoutes } from './agent/routes.ts'
import { categoryRoutes } from './categories/routes.ts'
import { changeRoutes } from './changes/routes.ts'
import { keyRoutes } from './keys/routes.ts'
import { meRoutes } from './me/routes.ts'
import { payeeRoutes } from './payees/routes.ts'
import { tagRoutes } from './tags/routes.ts'
import { transactionRoutes } from './transactions/routes.ts'

/** Every /v1 route, in the order they appear in the API document. */
export const routes: AnyRoute[] = [
  ...meRoutes,
  ...agentRoutes,
  ...accountRoutes,
  ...transactionRoutes,
  ...categoryRoutes,
  ...payeeRoutes,
  ...tagRoutes,
  ...changeRoutes,
  ...keyRoutes,
]
