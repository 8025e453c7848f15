import { describe, expect, test } from 'bun:test'
import {
  expectProblem,
  expectReplayOf as expectStoredReplay,
  sendRaw,
  serverWithOwner,
  startTestServer,
  tempDir,
  type TestResponse,
} from '../support/harness.ts'
import { LEAKY_MESSAGE, makeFixture, openFile, sleep } from './fixtures.ts'

/** CONTRACT §8 over a throwaway POST route whose handler writes to the tenant file and counts its runs. */

const fixture = makeFixture()
const { server, owner } = serverWithOwner({
  owner: { name: 'Idem' },
  start: () => startTestServer({ extraRoutes: fixture.routes, env: { RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_PER_DAY: '1000000' } }),
})

const post = (idempotencyKey: string | null, body: unknown, opts: { key?: string; path?: string; headers?: Record<string, string> } = {}) =>
  server.request('POST', opts.path ?? '/v1/test-items', { key: opts.key ?? owner.key, body, idempotencyKey, headers: opts.headers })

const uniqueKey = (label: string) => `${label}-${crypto.randomUUID()}`

/** A replay as every suite checks it (the harness's expectReplayOf), and with the original's content type too. */
function expectReplayOf(replay: TestResponse, original: TestResponse) {
  expectStoredReplay(replay, original)
  expect(replay.headers.get('content-type')).toBe(original.headers.get('content-type'))
}

function tenantProfileRows(ownerId: string): number {
  const db = openFile(server.dataDir, `tenants/${ownerId}.db`, true)
  try {
    return Number(db.query<{ n: number }, []>('SELECT count(*) AS n FROM profile').get()?.n)
  } finally {
    db.close()
  }
}

describe('replay', () => {
  test('same key and body: same status, byte-identical body, Idempotent-Replayed, original X-Request-Id; the handler ran once', async () => {
    const key = uniqueKey('replay')
    const runs = fixture.items.runs
    const rows = tenantProfileRows(owner.id)
    const first = await post(key, { name: 'Coffee', amount: 3.2 }, { headers: { 'x-request-id': 'first-attempt' } })
    expect(first.status).toBe(201)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    expect(first.headers.get('x-request-id')).toBe('first-attempt')
    expect(first.headers.get('location')).toBe(`/v1/test-items/${first.json.data.id}`)

    const second = await post(key, { name: 'Coffee', amount: 3.2 }, { headers: { 'x-request-id': 'second-attempt' } })
    expectReplayOf(second, first)
    expect(second.headers.get('x-request-id')).toBe('first-attempt')
    const third = await post(key, { name: 'Coffee', amount: 3.2 })
    expectReplayOf(third, first)

    expect(fixture.items.runs).toBe(runs + 1)
    expect(tenantProfileRows(owner.id)).toBe(rows + 1)
  })

  test('key order, whitespace and number spelling do not change the fingerprint', async () => {
    const key = uniqueKey('canonical')
    const runs = fixture.items.runs
    const first = await post(key, '{"name":"Tea","amount":1.50,"tags":["a","b"]}')
    expect(first.status).toBe(201)
    for (const spelling of [
      '{"tags":["a","b"],"amount":1.5,"name":"Tea"}',
      '{ "amount" : 15e-1 , "name" : "Tea", "tags" : [ "a" , "b" ] }',
      '{"name":"Tea","tags":["a","b"],"amount":0.150E1}',
    ]) {
      expectReplayOf(await post(key, spelling), first)
    }
    expect(fixture.items.runs).toBe(runs + 1)
    // A different value, or a different array order, is a different request.
    expectProblem(await post(key, '{"name":"Tea","amount":1.51,"tags":["a","b"]}'), 409, 'idempotency_key_reused')
    expectProblem(await post(key, '{"name":"Tea","amount":1.5,"tags":["b","a"]}'), 409, 'idempotency_key_reused')
    expect(fixture.items.runs).toBe(runs + 1)
  })

  test('after a restart with the control-db record lost, the retry replays from the tenant file; nothing runs twice', async () => {
    const dataDir = tempDir()
    const probe = makeFixture()
    const a = await startTestServer({ dataDir, extraRoutes: probe.routes })
    const who = await a.owner()
    const key = uniqueKey('restart')
    const first = await a.request('POST', '/v1/test-items', { key: who.key, body: { name: 'Rent', amount: 900 }, idempotencyKey: key })
    expect(first.status).toBe(201)
    await a.stop({ remove: false })
    // As after a kill -9 between the tenant commit and the control-db write: only the tenant file knows.
    const control = openFile(dataDir, 'control.db')
    try {
      expect(control.query('DELETE FROM idempotency_records WHERE key = ?').run(key).changes).toBe(1)
    } finally {
      control.close()
    }

    const afterRestart = makeFixture()
    const b = await startTestServer({ dataDir, extraRoutes: afterRestart.routes })
    try {
      expectReplayOf(await b.request('POST', '/v1/test-items', { key: who.key, body: { name: 'Rent', amount: 900 }, idempotencyKey: key }), first)
      expect(afterRestart.items.runs).toBe(0)
    } finally {
      await b.stop()
    }
  })
})

describe('conflicts', () => {
  test('same key, different body: 409 idempotency_key_reused, nothing runs', async () => {
    const key = uniqueKey('reuse-body')
    expect((await post(key, { name: 'A', amount: 1 })).status).toBe(201)
    const runs = fixture.items.runs
    const res = await post(key, { name: 'A', amount: 2 })
    expectProblem(res, 409, 'idempotency_key_reused')
    expect(res.headers.get('idempotent-replayed')).toBeNull()
    expect(fixture.items.runs).toBe(runs)
  })

  test('same key on another path or method: 409 idempotency_key_reused', async () => {
    const key = uniqueKey('reuse-path')
    expect((await post(key, { name: 'A', amount: 1 })).status).toBe(201)
    const runs = fixture.others.runs
    expectProblem(await post(key, { name: 'A', amount: 1 }, { path: '/v1/test-others' }), 409, 'idempotency_key_reused')
    expect(fixture.others.runs).toBe(runs)
    const patch = await server.request('PATCH', '/v1/test-items/x1', { key: owner.key, body: { name: 'A' }, idempotencyKey: key })
    expectProblem(patch, 409, 'idempotency_key_reused')
  })

  test('keys are scoped to the owner: two owners can use the same key independently', async () => {
    const other = await server.owner({ name: 'Other' })
    const key = uniqueKey('shared')
    const runs = fixture.items.runs
    const mine = await post(key, { name: 'Mine', amount: 1 })
    const theirs = await post(key, { name: 'Theirs', amount: 2 }, { key: other.key })
    expect(mine.status).toBe(201)
    expect(theirs.status).toBe(201)
    expect(theirs.headers.get('idempotent-replayed')).toBeNull()
    expect(theirs.json.data.name).toBe('Theirs')
    expect(fixture.items.runs).toBe(runs + 2)
    // And each replays its own.
    expectReplayOf(await post(key, { name: 'Theirs', amount: 2 }, { key: other.key }), theirs)
    expectReplayOf(await post(key, { name: 'Mine', amount: 1 }), mine)
  })

  test('concurrent requests with one key: exactly one execution; the others replay or get 409 idempotency_key_in_progress with Retry-After: 1', async () => {
    const key = uniqueKey('race')
    const runs = fixture.items.runs
    const text = JSON.stringify({ name: 'Race', amount: 7 })
    // Bodies trickle in, so every request is inside the pipeline at the same time.
    const slowBody = () =>
      new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode(text.slice(0, 5)))
          await sleep(40)
          controller.enqueue(new TextEncoder().encode(text.slice(5)))
          controller.close()
        },
      })
    const headers = { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json', 'idempotency-key': key }
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        i % 2 === 0 ? sendRaw(server.url, '/v1/test-items', { method: 'POST', headers, body: slowBody() }) : post(key, { name: 'Race', amount: 7 }),
      ),
    )
    expect(fixture.items.runs).toBe(runs + 1)
    const originals = responses.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null)
    expect(originals).toHaveLength(1)
    const original = originals[0] as TestResponse
    for (const res of responses) {
      if (res === original) continue
      if (res.status === 409) {
        expectProblem(res, 409, 'idempotency_key_in_progress')
        expect(res.headers.get('retry-after')).toBe('1')
      } else {
        expectReplayOf(res, original)
      }
    }
    // Once the first has finished, a retry is a replay.
    expectReplayOf(await post(key, { name: 'Race', amount: 7 }), original)
  })
})

describe('the Idempotency-Key header', () => {
  test('missing or empty: 400 idempotency_key_missing, checked before the body', async () => {
    const runs = fixture.items.runs
    expectProblem(await post(null, { name: 'A', amount: 1 }), 400, 'idempotency_key_missing')
    expectProblem(await post('', { name: 'A', amount: 1 }), 400, 'idempotency_key_missing')
    expectProblem(await post(null, '{"name":'), 400, 'idempotency_key_missing')
    const patch = await server.request('PATCH', '/v1/test-items/x1', { key: owner.key, body: { name: 'A' }, idempotencyKey: null })
    expectProblem(patch, 400, 'idempotency_key_missing')
    expect(fixture.items.runs).toBe(runs)
  })

  test('256 characters or non-ASCII: 400 idempotency_key_invalid; 255 printable ASCII characters are fine', async () => {
    const runs = fixture.items.runs
    const long = expectProblem(await post('k'.repeat(256), { name: 'A', amount: 1 }), 400, 'idempotency_key_invalid')
    expect(long.detail).toContain('255')
    const latin = await sendRaw(server.url, '/v1/test-items', {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json', 'idempotency-key': 'caf\u00e9-1' },
      body: JSON.stringify({ name: 'A', amount: 1 }),
    })
    expectProblem(latin, 400, 'idempotency_key_invalid')
    expect(fixture.items.runs).toBe(runs)
    const max = `~ !${'k'.repeat(251)}}`
    expect(max).toHaveLength(255)
    const ok = await post(max, { name: 'A', amount: 1 })
    expect(ok.status).toBe(201)
    expectReplayOf(await post(max, { name: 'A', amount: 1 }), ok)
  })
})

describe('what is stored', () => {
  test('rejections before the handler (422 validation_failed, 400 malformed_json, 415) are not stored: fix the body, retry with the same key', async () => {
    const key = uniqueKey('fix-and-retry')
    const runs = fixture.items.runs
    expectProblem(await post(key, { name: 'A' }), 422, 'validation_failed')
    expectProblem(await post(key, '{"name":"A",'), 400, 'malformed_json')
    const wrongType = await sendRaw(server.url, '/v1/test-items', {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'text/plain', 'idempotency-key': key },
      body: JSON.stringify({ name: 'A', amount: 1 }),
    })
    expectProblem(wrongType, 415, 'unsupported_media_type')
    expect(fixture.items.runs).toBe(runs)
    const fixed = await post(key, { name: 'A', amount: 1 })
    expect(fixed.status).toBe(201)
    expect(fixture.items.runs).toBe(runs + 1)
    expectReplayOf(await post(key, { name: 'A', amount: 1 }), fixed)
  })

  test('a 4xx thrown by the handler (rule_violation) is stored and replayed byte for byte', async () => {
    const key = uniqueKey('rule')
    const runs = fixture.items.runs
    const first = await post(key, { name: 'reject', amount: 1 })
    const problem = expectProblem(first, 422, 'rule_violation')
    expect(problem.detail).toBe(`rule broken on run ${runs + 1}`)
    const again = await post(key, { name: 'reject', amount: 1 })
    expectProblem(again, 422, 'rule_violation')
    expectReplayOf(again, first)
    expect(fixture.items.runs).toBe(runs + 1)
    // A different body under the same key is still a conflict.
    expectProblem(await post(key, { name: 'accept', amount: 1 }), 409, 'idempotency_key_reused')
  })

  test('a 500 is not stored (and its write rolled back): the retry with the same key runs and succeeds', async () => {
    const key = uniqueKey('boom')
    const runs = fixture.items.runs
    const rows = tenantProfileRows(owner.id)
    fixture.items.failNext = 1
    const failed = await post(key, { name: 'Flaky', amount: 1 })
    const problem = expectProblem(failed, 500, 'internal_error')
    for (const secret of fixture.secrets) expect(failed.text).not.toContain(secret)
    expect(failed.text).not.toContain(LEAKY_MESSAGE)
    expect(problem.detail).toContain(problem.request_id)
    expect(tenantProfileRows(owner.id)).toBe(rows)

    const retry = await post(key, { name: 'Flaky', amount: 1 })
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBeNull()
    expect(fixture.items.runs).toBe(runs + 2)
    expect(tenantProfileRows(owner.id)).toBe(rows + 1)
  })
})

describe('exactly once', () => {
  test('the control copy follows the response without being asked: concurrent answers all reach control.db, byte for byte', async () => {
    const keys = Array.from({ length: 20 }, (_, n) => uniqueKey(`copy-${n}`))
    const answers = await Promise.all(keys.map((key, n) => post(key, { name: `Copy ${n}`, amount: n })))
    const copied = () => {
      const db = openFile(server.dataDir, 'control.db', true)
      try {
        const select = db.query<{ body: string }, [string, string]>('SELECT body FROM idempotency_records WHERE owner_id = ? AND key = ?')
        return keys.map((key) => select.get(owner.id, key)?.body)
      } finally {
        db.close()
      }
    }
    for (let waited = 0; copied().includes(undefined) && waited < 2000; waited += 10) await sleep(10)
    expect(copied()).toEqual(answers.map((answer) => answer.text))
  })

  test('the write records its key in the tenant file in the same transaction', async () => {
    const key = uniqueKey('tenant-record')
    const res = await post(key, { name: 'Recorded', amount: 1 })
    expect(res.status).toBe(201)
    const db = openFile(server.dataDir, `tenants/${owner.id}.db`, true)
    try {
      const row = db
        .query<{ status: number; body: string; request_id: string }, [string]>('SELECT status, body, request_id FROM applied_requests WHERE key = ?')
        .get(key)
      expect(row).not.toBeNull()
      expect(Number(row?.status)).toBe(201)
      expect(row?.body).toBe(res.text)
      expect(row?.request_id).toBe(res.headers.get('x-request-id') as string)
    } finally {
      db.close()
    }
  })

  test('after a lost control-db write, the retry replays from the tenant file and does not run again', async () => {
    const key = uniqueKey('lost-control')
    const runs = fixture.items.runs
    const first = await post(key, { name: 'Salary', amount: -2500 })
    expect(first.status).toBe(201)
    const rows = tenantProfileRows(owner.id)

    // The copy is written just after the response; write it now, then lose it.
    server.platform.idempotency.copyNow()
    const control = openFile(server.dataDir, 'control.db')
    try {
      const deleted = control.query('DELETE FROM idempotency_records WHERE owner_id = ? AND key = ?').run(owner.id, key)
      expect(deleted.changes).toBe(1)
    } finally {
      control.close()
    }

    expectReplayOf(await post(key, { name: 'Salary', amount: -2500 }), first)
    expect(fixture.items.runs).toBe(runs + 1)
    expect(tenantProfileRows(owner.id)).toBe(rows)
    // The fingerprint is kept in the tenant record too.
    expectProblem(await post(key, { name: 'Salary', amount: -2600 }), 409, 'idempotency_key_reused')
    expect(fixture.items.runs).toBe(runs + 1)
  })

  test("an owner file's expired records are dropped soon after the file is opened again, without delaying that request", async () => {
    const key = uniqueKey('purged-on-open')
    expect((await post(key, { name: 'Old', amount: 1 })).status).toBe(201)
    server.platform.tenants.evict(owner.id)
    const count = () => {
      const db = openFile(server.dataDir, `tenants/${owner.id}.db`)
      try {
        return Number(db.query<{ n: number }, [string]>('SELECT count(*) AS n FROM applied_requests WHERE key = ?').get(key)?.n)
      } finally {
        db.close()
      }
    }
    const db = openFile(server.dataDir, `tenants/${owner.id}.db`)
    try {
      db.query('UPDATE applied_requests SET created_at = created_at - ? WHERE key = ?').run(25 * 3_600_000, key)
    } finally {
      db.close()
    }
    expect(count()).toBe(1)
    expect((await server.request('GET', '/v1/accounts', { key: owner.key })).status).toBe(200)
    for (let waited = 0; count() > 0 && waited < 2000; waited += 10) await sleep(10)
    expect(count()).toBe(0)
  })

  test('a key whose stored response has expired (past IDEMPOTENCY_TTL_HOURS) is fresh again', async () => {
    const key = uniqueKey('expired')
    const first = await post(key, { name: 'Old', amount: 1 })
    expect(first.status).toBe(201)
    // Age both records by 25 hours (the TTL is 24 h by default), the control copy written first.
    server.platform.idempotency.copyNow()
    const age = 25 * 3_600_000
    for (const [file, table] of [
      ['control.db', 'idempotency_records'],
      [`tenants/${owner.id}.db`, 'applied_requests'],
    ] as const) {
      const db = openFile(server.dataDir, file)
      try {
        expect(db.query(`UPDATE ${table} SET created_at = created_at - ? WHERE key = ?`).run(age, key).changes).toBe(1)
      } finally {
        db.close()
      }
    }
    const runs = fixture.items.runs
    const again = await post(key, { name: 'New', amount: 2 })
    expect({ status: again.status, body: again.json }).toMatchObject({ status: 201, body: { data: { name: 'New' } } })
    expect(again.headers.get('idempotent-replayed')).toBeNull()
    expect(fixture.items.runs).toBe(runs + 1)
    expectReplayOf(await post(key, { name: 'New', amount: 2 }), again)
  })
})
