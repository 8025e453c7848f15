import { defineRoute } from '../../platform/route.ts'
import { MeResponse, toMe } from './model.ts'

export const meRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/me',
    operationId: 'getMe',
    summary: 'The authenticated owner and the calling key’s scopes',
    tag: 'Profile',
    scopes: ['me:read'],
    response: MeResponse,
    statuses: [200],
    handle: ({ auth }) => ({ status: 200, body: { data: toMe(auth) } }),
  }),
]
