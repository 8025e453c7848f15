import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import fc from 'fast-check'
import { newId } from '../../src/db/ids.ts'
import { EDITOR_SCOPES, SCOPES, VIEWER_SCOPES } from '../../src/platform/scopes.ts'
import { startUnthrottledServer, type TestServer } from '../support/harness.ts'

/**
 * Owner isolation with households (CONTRACT §30), as a property: random grants (viewer or
 * editor) and revocations between three owners, and random requests with and without
 * Pfin-Subject; after each step every answer is checked against a model of who may see what.
 * An owner's account list must hold exactly that owner's account, and nobody else's, ever.
 */

setDefaultTimeout(120_000)

let server: TestServer
const people: { id: string; key: string; account: string }[] = []

beforeAll(async () => {
  server = await startUnthrottledServer()
  for (const name of ['Ana', 'Bea', 'Cai']) {
    const owner = await server.owner({ name, scopes: [...SCOPES] })
    const account = `${name}'s account`
    await server.request('POST', '/v1/accounts', { key: owner.key, body: { name: account, type: 'bank', currency: 'EUR', balance: 0 } })
    people.push({ id: owner.id, key: owner.key, account })
  }
})
afterAll(() => server.stop())

type Step =
  | { kind: 'grant'; subject: number; grantee: number; role: 'viewer' | 'editor' }
  | { kind: 'revoke'; subject: number; grantee: number }
  | { kind: 'read'; who: number; subject: number | null }
  | { kind: 'write'; who: number; subject: number | null }

const who = fc.integer({ min: 0, max: 2 })
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('grant' as const), subject: who, grantee: who, role: fc.constantFrom('viewer' as const, 'editor' as const) }),
  fc.record({ kind: fc.constant('revoke' as const), subject: who, grantee: who }),
  fc.record({ kind: fc.constant('read' as const), who, subject: fc.option(who, { nil: null }) }),
  fc.record({ kind: fc.constant('write' as const), who, subject: fc.option(who, { nil: null }) }),
)

test('after every step, every answer matches the model of who may see and write what', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 25 }), async (steps) => {
      // The model: live grants by "subject>grantee", with their role, and their ids to revoke.
      const live = new Map<string, { id: string; role: 'viewer' | 'editor' }>()
      try {
        for (const s of steps) {
          if (s.kind === 'grant') {
            if (s.subject === s.grantee || live.has(`${s.subject}>${s.grantee}`)) continue
            const id = newId('grt')
            const made = server.platform.control.grants.create({
              id,
              subjectOwnerId: people[s.subject]?.id as string,
              granteeOwnerId: people[s.grantee]?.id as string,
              scopes: [...(s.role === 'viewer' ? VIEWER_SCOPES : EDITOR_SCOPES)],
              label: null,
              createdAt: Date.now(),
              expiresAt: null,
              revokedAt: null,
            })
            expect(made.created).toBe(true)
            live.set(`${s.subject}>${s.grantee}`, { id, role: s.role })
            continue
          }
          if (s.kind === 'revoke') {
            const g = live.get(`${s.subject}>${s.grantee}`)
            if (g) server.platform.control.grants.revoke(g.id, Date.now())
            live.delete(`${s.subject}>${s.grantee}`)
            continue
          }
          const me = people[s.who] as (typeof people)[number]
          const target = s.subject === null ? s.who : s.subject
          const headers: Record<string, string> = s.subject === null ? {} : { 'pfin-subject': people[s.subject]?.id as string }
          const grantRole = target === s.who ? 'self' : live.get(`${target}>${s.who}`)?.role
          if (s.kind === 'read') {
            const res = await server.request('GET', '/v1/accounts', { key: me.key, headers })
            if (grantRole === undefined) expect(res.status).toBe(404)
            else {
              expect(res.status).toBe(200)
              expect(res.json.data.map((a: { name: string }) => a.name)).toEqual([people[target]?.account])
            }
          } else {
            const res = await server.request('POST', '/v1/payees', { key: me.key, headers, body: { name: `p-${crypto.randomUUID()}` } })
            const expected = grantRole === undefined ? 404 : grantRole === 'viewer' ? 403 : 201
            expect(res.status).toBe(expected)
          }
        }
      } finally {
        for (const g of live.values()) server.platform.control.grants.revoke(g.id, Date.now())
      }
    }),
    { numRuns: 25 },
  )
})
