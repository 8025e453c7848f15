import { expect, test } from 'bun:test'
import { unthrottledServerWithKey } from '../support/harness.ts'

/**
 * /openapi.json gives `X-RateLimit-Reset-Minute`, `X-RateLimit-Reset-Day` and `Retry-After`
 * `minimum: 1`, and the server keeps to it: CONTRACT §7 says "`Reset-*` and `Retry-After` are
 * **seconds from now** (integers ≥ 1)", and §12 asks for a true document.
 */

const fixture = unthrottledServerWithKey()

test('the document gives the reset headers and Retry-After minimum 1, and the server keeps to it', async () => {
  const doc = (await fixture.server.request('GET', '/openapi.json')).json as { components: { headers: Record<string, { schema: { minimum?: number } }> } }
  for (const name of ['RateLimitResetMinute', 'RateLimitResetDay', 'RetryAfter']) expect(doc.components.headers[name]?.schema.minimum).toBe(1)
  const me = await fixture.server.request('GET', '/v1/me', { key: fixture.key })
  expect(Number(me.headers.get('x-ratelimit-reset-minute'))).toBeGreaterThanOrEqual(1)
  expect(Number(me.headers.get('x-ratelimit-reset-day'))).toBeGreaterThanOrEqual(1)
})
