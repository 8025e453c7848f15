import type { AuthContext } from '../../platform/auth.ts'
import { entityTagOfBody } from '../../platform/etag.ts'
import { defineRoute, type Reply } from '../../platform/route.ts'
import { MeResponse, toMe } from './model.ts'

type MeBody = typeof MeResponse.static

/**
 * The body depends on the caller's auth context alone, and the authenticator makes a new
 * context whenever the key or its owner may have changed, so each context's body is built
 * and serialized once, its ETag with it (CONTRACT §25).
 */
const replies = new WeakMap<AuthContext, Reply<MeBody>>()

function meReply(auth: AuthContext): Reply<MeBody> {
  let reply = replies.get(auth)
  if (!reply) {
    const body = { data: toMe(auth) }
    const serialized = JSON.stringify(body)
    reply = { status: 200, body, serialized, etag: entityTagOfBody(serialized) }
    replies.set(auth, reply)
  }
  return reply
}

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
    etag: true,
    handle: ({ auth }) => meReply(auth),
  }),
]
