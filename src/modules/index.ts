import type { AnyRoute } from '../platform/route.ts'
import { accountRoutes } from './accounts/routes.ts'
import { categoryRoutes } from './categories/routes.ts'
import { meRoutes } from './me/routes.ts'

/** Every /v1 route, in the order they appear in the API document. */
export const routes: AnyRoute[] = [...meRoutes, ...accountRoutes, ...categoryRoutes]
