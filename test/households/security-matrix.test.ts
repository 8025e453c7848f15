import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { newId } from '../../src/db/ids.ts'
import { routes } from '../../src/modules/index.ts'
import { NO_SUBJECT } from '../../src/platform/delegation.ts'
import type { AnyRoute } from '../../src/platform/route.ts'
import { EDITOR_SCOPES, type Scope, VIEWER_SCOPES } from '../../src/platform/scopes.ts'
import { expectProblem, startUnthrottledServer, type TestResponse, type TestServer } from '../support/harness.ts'
import { grantNow } from '../support/households.ts'

/**
 * CONTRACT §30's security proof, table-driven over every operation of /openapi.json: each is
 * sent in delegated mode (`Pfin-Subject`) with no grant, a viewer grant, an editor grant, and a
 * key narrower than its grant. A new route is covered by being in the document; one this table
 * cannot reach (no example path for it) fails the first test.
 */

type Operation = { method: string; path: string; route: AnyRoute }

let server: TestServer
let ana: { id: string; key: string; keyId: string }
let bea: { id: string; key: string; keyId: string }
const operations: Operation[] = []
const ids: Record<string, string> = {}
const counts = { noGrant: 0, viewerRead: 0, viewerWrite: 0, editorRead: 0, editorWrite: 0, editorRefused: 0, narrow: 0, notDelegable: 0 }

const isRead = (route: AnyRoute) => route.scopes.every((scope) => scope.endsWith(':read'))
const QUERY: Record<string, string> = {
  '/v1/budgets': '?from=2026-01&to=2026-03',
  '/v1/reports/spending': '?groupBy=category&from=2026-01-01&to=2026-03-31',
}

function concrete(path: string): string {
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = ids[name]
    if (value === undefined) throw new Error(`no example id for {${name}} of ${path}`)
    return value
  })
  return filled + (QUERY[path] ?? '')
}

function bodyFor(op: Operation): unknown {
  if (op.path === '/v1/rules/test') return { ruleId: ids.ruleId, from: '2026-01-01', to: '2026-03-31' }
  return op.route.requestExample ?? {}
}

const delegated = (op: Operation, key: string, subject: string): Promise<TestResponse> =>
  server.request(op.method, concrete(op.path), {
    key,
    headers: { 'pfin-subject': subject },
    ...(op.method === 'GET' || op.method === 'DELETE' ? {} : { body: bodyFor(op) }),
  })

/** Every row of every table of an owner's file: what "nothing changed there" is checked against. */
function fileSnapshot(ownerId: string): Record<string, unknown[]> {
  const db = server.platform.tenants.get(ownerId).sqlite
  const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all()
  return Object.fromEntries(tables.map(({ name }) => [name, db.query(`SELECT * FROM "${name}"`).all()]))
}

async function post(key: string, path: string, body: unknown, subject?: string) {
  const res = await server.request('POST', path, { key, body, headers: subject ? { 'pfin-subject': subject } : {} })
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`)
  return res.json.data
}

function grant(scopes: readonly Scope[], expiresAt: number | null = null): string {
  return grantNow(server.platform.control, ana.id, bea.id, scopes, expiresAt)
}

beforeAll(async () => {
  server = await startUnthrottledServer()
  ana = await server.owner({ name: 'Ana', defaultCurrency: 'EUR', country: 'PT' })
  bea = await server.owner({ name: 'Bea' })
  // Bea's key holds every scope: whatever a delegated request is refused, the grant refused it.
  const all = await server.key(bea.id, { scopes: [...(await import('../../src/platform/scopes.ts')).SCOPES] })
  bea.key = all.key
  bea.keyId = all.id
  const account = await post(ana.key, '/v1/accounts', { name: 'Joint', type: 'bank', currency: 'EUR', balance: 100 })
  const category = await post(ana.key, '/v1/categories', { name: 'Kids' })
  const payee = await post(ana.key, '/v1/payees', { name: 'Grocer' })
  const tag = await post(ana.key, '/v1/tags', { name: 'Holiday' })
  const rule = await post(ana.key, '/v1/rules', routes.find((r) => r.path === '/v1/rules' && r.method === 'POST')?.requestExample)
  const preset = await post(ana.key, '/v1/import-presets', routes.find((r) => r.path === '/v1/import-presets' && r.method === 'POST')?.requestExample)
  const txn = await post(ana.key, '/v1/transactions', { accountId: account.id, amount: -12.5, date: '2026-02-03', payeeName: 'Grocer' })
  const schedule = await post(ana.key, '/v1/schedules', {
    name: 'Rent',
    accountId: account.id,
    amount: 800,
    recurrence: { freq: 'monthly', interval: 1, byMonthDay: [1], start: '2026-01-01' },
  })
  Object.assign(ids, {
    scheduleId: schedule.id,
    accountId: account.id,
    categoryId: category.id,
    payeeId: payee.id,
    tagId: tag.id,
    ruleId: rule.id,
    presetId: preset.id,
    transactionId: txn.id,
    month: '2026-02',
    keyId: bea.keyId,
    grantId: newId('grt'),
  })
  const doc = (await server.request('GET', '/openapi.json')).json
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    if (!path.startsWith('/v1/')) continue
    for (const method of Object.keys(item)) {
      const upper = method.toUpperCase()
      const route = routes.find((r) => r.method === upper && r.path === path.replace(/\{(\w+)\}/g, ':$1'))
      if (!route) throw new Error(`${upper} ${path} is in the document but not a route`)
      operations.push({ method: upper, path, route })
    }
  }
})
afterAll(() => server.stop())

const reads = () => operations.filter((op) => op.route.delegable !== false && isRead(op.route))
const writes = () => operations.filter((op) => op.route.delegable !== false && !isRead(op.route))
const principalOnly = () => operations.filter((op) => op.route.delegable === false)

describe('every operation of /openapi.json in delegated mode (CONTRACT §30)', () => {
  test('the document is covered: every operation has an example path', () => {
    expect(operations.length).toBe(routes.length)
    for (const op of operations) concrete(op.path)
  })

  test('no grant → 404 not_found on every route, the same answer for an unknown owner, a malformed id, and a real owner', async () => {
    const stranger = await server.owner({ name: 'Stranger' })
    for (const subject of [ana.id, stranger.id, newId('own'), 'own_x', 'acct_123', '../../etc', '']) {
      for (const op of operations) {
        const res = await delegated(op, bea.key, subject)
        const problem = expectProblem(res, 404, 'not_found')
        expect(problem.detail).toStartWith(NO_SUBJECT)
        counts.noGrant++
      }
    }
  })

  test('a viewer grant: every read works, every write is 403 even though the key holds the write scope', async () => {
    const id = grant(VIEWER_SCOPES)
    const before = fileSnapshot(ana.id)
    for (const op of reads()) {
      const res = await delegated(op, bea.key, ana.id)
      if (res.status !== 200) throw new Error(`${op.method} ${op.path}: ${res.status} ${res.text}`)
      counts.viewerRead++
    }
    for (const op of writes()) {
      const problem = expectProblem(await delegated(op, bea.key, ana.id), 403, 'insufficient_scope')
      expect(problem.detail).toContain('grant')
      counts.viewerWrite++
    }
    for (const op of principalOnly()) {
      expectProblem(await delegated(op, bea.key, ana.id), 403, 'insufficient_scope')
      counts.notDelegable++
    }
    // A read sent as POST (/v1/rules/test) keeps its answer for replay, as every POST does: the data is what must not move.
    const { applied_requests: _, ...after } = fileSnapshot(ana.id)
    const { applied_requests: __, ...unchanged } = before
    expect(after).toEqual(unchanged)
    server.platform.control.grants.revoke(id, Date.now())
  })

  test("the key's narrower scopes win over a wider grant", async () => {
    const id = grant(EDITOR_SCOPES)
    const narrow = await server.key(bea.id, { scopes: ['transactions:read'] })
    for (const op of [...reads(), ...writes()]) {
      const res = await delegated(op, narrow.key, ana.id)
      if (op.route.scopesNeeded === 'any' ? op.route.scopes.includes('transactions:read') : op.route.scopes.every((s) => s === 'transactions:read')) {
        if (res.status !== 200) throw new Error(`${op.method} ${op.path}: ${res.status} ${res.text}`)
      } else {
        const problem = expectProblem(res, 403, 'insufficient_scope')
        expect(problem.detail).not.toContain('does not include')
      }
      counts.narrow++
    }
    server.platform.control.grants.revoke(id, Date.now())
  })

  test("an editor grant: reads work; its writes land in the subject's file and nothing in the grantee's; writes beyond it are 403", async () => {
    const id = grant(EDITOR_SCOPES)
    const beaBefore = fileSnapshot(bea.id)
    for (const op of reads()) {
      const res = await delegated(op, bea.key, ana.id)
      if (res.status !== 200) throw new Error(`${op.method} ${op.path}: ${res.status} ${res.text}`)
      counts.editorRead++
    }
    // Real writes, checked in Ana's file.
    const txn = await post(bea.key, '/v1/transactions', { accountId: ids.accountId, amount: -3, date: '2026-02-04', note: 'from Bea' }, ana.id)
    const payee = await post(bea.key, '/v1/payees', { name: 'Bea’s payee' }, ana.id)
    const anaDb = server.platform.tenants.get(ana.id).sqlite
    expect(anaDb.query('SELECT note FROM transactions WHERE id = ?').get(txn.id)).toEqual({ note: 'from Bea' })
    expect(anaDb.query('SELECT name FROM payees WHERE id = ?').get(payee.id)).toEqual({ name: 'Bea’s payee' })
    const editable = (op: Operation) => op.route.scopes.every((scope) => EDITOR_SCOPES.includes(scope))
    for (const op of writes()) {
      const res = await delegated(op, bea.key, ana.id)
      if (editable(op)) {
        // Admitted: whatever the handler answers of the example body, neither the grant nor the subject refused it.
        if (res.status >= 500 || res.json?.code === 'insufficient_scope' || String(res.json?.detail).startsWith(NO_SUBJECT)) {
          throw new Error(`${op.method} ${op.path}: ${res.status} ${res.text}`)
        }
        counts.editorWrite++
      } else {
        expectProblem(res, 403, 'insufficient_scope')
        counts.editorRefused++
      }
    }
    expect(fileSnapshot(bea.id)).toEqual(beaBefore)
    server.platform.control.grants.revoke(id, Date.now())
  })

  test('the matrix counts (printed for the record)', () => {
    console.log(`security matrix: ${JSON.stringify(counts)}`)
    expect(counts.noGrant).toBe(operations.length * 7)
    expect(counts.viewerRead + counts.viewerWrite + counts.notDelegable).toBe(operations.length)
  })
})
