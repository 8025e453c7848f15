import { Database } from 'bun:sqlite'
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { startUnthrottledServer } from '../support/harness.ts'
import { adminJson, call, cleanup, processEnv, startServer, tempDir } from '../support/processes.ts'

/**
 * Campaign 8 finding (2026-11-26): the stored answer of a write its handler refused (409
 * `external_id_conflict`, 422 `rule_violation` / `invalid_reference`, 409 `payee_exists`) lives only
 * in a write-behind copy to control.db, made a turn after the answer went out
 * (`refused` → `recordInControl` in pipeline.ts). Unlike a committed write's answer it is not
 * recorded in the owner's file, so when that copy does not happen — the server is killed first,
 * or the copy fails (control.db full: "N idempotency record(s) not copied to control.db (the
 * owners' files keep them)", which is not true of these) — the refusal is forgotten. The retry
 * with the same Idempotency-Key then runs the handler again, and once the conflict is gone it
 * creates the transaction the client was told was refused.
 *
 * CONTRACT §8: "Stored: every response of a request that reached its handler, with status < 500
 * (a 422 `invalid_reference` or `rule_violation` from the handler is stored and replayed)";
 * "Same key, same fingerprint: the stored response is replayed byte for byte … nothing runs
 * twice". §11: "The control database may use synchronous=NORMAL: every write it must never lose
 * is backed by the tenant-side record."
 *
 * Before a fix: test 1 — after kill -9 and a restart the retry answers 201 and writes a
 * transaction (the client holds a 409 for that key); test 2 — 35 of 40 refused keys (those
 * answered once control.db was full) run again on retry (the first retry creates the
 * transaction, the others answer a new 409 with a new request_id and no Idempotent-Replayed).
 * The kill test holds control.db's write lock (as an admin command's transaction does) only to
 * make the gap between the answer and its copy wide enough to land a SIGKILL in it.
 */

afterAll(cleanup)

test('a 409 answered just before kill -9 is replayed after the restart, not run again', async () => {
  const env = processEnv(tempDir('pfin-campaign8-refusal-'), { LOG_FORMAT: 'off' })
  const owner = (await adminJson(env, 'owner', 'create', '--name', 'Refused')).id as string
  const key = (await adminJson(env, 'key', 'create', '--owner', owner)).key as string
  let server = await startServer(env)
  try {
    const account = JSON.parse(
      (
        await call(server.url, 'POST', '/v1/accounts', {
          key,
          idempotencyKey: 'acct',
          body: JSON.stringify({ name: 'Main', type: 'bank', balance: 0, currency: 'EUR' }),
        })
      ).text,
    ).data
    const first = await call(server.url, 'POST', '/v1/transactions', {
      key,
      idempotencyKey: 'first',
      body: JSON.stringify({ accountId: account.id, amount: 5, date: '2026-11-20', externalId: 'bank-1' }),
    })
    expect(first.status).toBe(201)
    const body = JSON.stringify({ accountId: account.id, amount: 7, date: '2026-11-21', externalId: 'bank-1' })
    const control = new Database(join(env.DATA_DIR as string, 'control.db'))
    let refused: Awaited<ReturnType<typeof call>>
    try {
      control.run('PRAGMA busy_timeout = 5000')
      control.run('BEGIN IMMEDIATE')
      refused = await call(server.url, 'POST', '/v1/transactions', { key, idempotencyKey: 'dup', body })
      server.proc.kill('SIGKILL')
      await server.proc.exited
    } finally {
      control.run('ROLLBACK')
      control.close()
    }
    expect(refused.status).toBe(409)
    expect(JSON.parse(refused.text).code).toBe('external_id_conflict')

    server = await startServer(env)
    // The conflicting transaction is deleted; the client retries its refused request, same key.
    expect((await call(server.url, 'DELETE', `/v1/transactions/${JSON.parse(first.text).data.id}`, { key })).status).toBe(200)
    const again = await call(server.url, 'POST', '/v1/transactions', { key, idempotencyKey: 'dup', body })
    const listed = JSON.parse((await call(server.url, 'GET', '/v1/transactions', { key })).text).data
    // Before a fix: { status: 201, replayed: null, sameBody: false, transactions: 1 }.
    expect({
      status: again.status,
      replayed: again.headers.get('idempotent-replayed'),
      sameBody: again.text === refused.text,
      transactions: listed.length,
    }).toEqual({
      status: 409,
      replayed: 'true',
      sameBody: true,
      transactions: 0,
    })
  } finally {
    server.proc.kill('SIGKILL')
  }
}, 30_000)

test('refusals answered while the control copy fails (control.db full) are replayed, not run again', async () => {
  const server = await startUnthrottledServer()
  server.platform.log = () => {}
  try {
    const owner = await server.owner()
    const account = (await server.request('POST', '/v1/accounts', { key: owner.key, body: { name: 'Main', type: 'bank', balance: 0, currency: 'EUR' } })).json
      .data
    const first = await server.request('POST', '/v1/transactions', {
      key: owner.key,
      body: { accountId: account.id, amount: 5, date: '2026-11-20', externalId: 'bank-1' },
    })
    expect(first.status).toBe(201)
    // "Disk full" for control.db only, as in test/platform/storage-failures.test.ts: the owner's file has room.
    const control = server.platform.control.sqlite
    const pages = Number(control.query<{ page_count: number | bigint }, []>('PRAGMA page_count').get()?.page_count)
    control.run(`PRAGMA max_page_count = ${pages}`)
    const bodyOf = (i: number) => ({ accountId: account.id, amount: 7, date: '2026-11-21', externalId: 'bank-1', note: `${i}${'z'.repeat(1900)}` })
    const answers: string[] = []
    try {
      for (let i = 0; i < 40; i++) {
        const res = await server.request('POST', '/v1/transactions', { key: owner.key, idempotencyKey: `dup-${i}`, body: bodyOf(i) })
        expect(res.status).toBe(409)
        answers.push(res.text)
      }
    } finally {
      control.run('PRAGMA max_page_count = 1073741823')
    }
    expect((await server.request('DELETE', `/v1/transactions/${first.json.data.id}`, { key: owner.key })).status).toBe(200)
    let ranAgain = 0
    for (const [i, text] of answers.entries()) {
      const again = await server.request('POST', '/v1/transactions', { key: owner.key, idempotencyKey: `dup-${i}`, body: bodyOf(i) })
      if (again.text !== text || again.headers.get('idempotent-replayed') !== 'true') ranAgain++
    }
    const listed = await server.request('GET', '/v1/transactions', { key: owner.key })
    // Before a fix: { ranAgain: 35, transactions: 1 }.
    expect({ ranAgain, transactions: listed.json.data.length }).toEqual({ ranAgain: 0, transactions: 0 })
  } finally {
    await server.stop()
  }
}, 30_000)
