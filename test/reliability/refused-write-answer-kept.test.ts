import { Database } from 'bun:sqlite'
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { startUnthrottledServer } from '../support/harness.ts'
import { call, cleanup, processEnv, startServer, tempDir, ownerWithKey } from '../support/processes.ts'

/**
 * A write its handler refused (409 `external_id_conflict`, 422 `rule_violation` /
 * `invalid_reference`, 409 `payee_exists`) keeps its stored answer through kill -9 and through
 * a failed copy to control.db: the retry with the same Idempotency-Key replays the refusal and
 * never runs the write.
 *
 * The copy to control.db is made a turn after the answer went out; a refusal recorded only there
 * is forgotten when the server is killed first or the copy fails (control.db full), and the retry
 * then runs the handler again and, once the conflict is gone, creates the transaction the client
 * was told was refused. CONTRACT §8: every response of a request that reached its handler, with
 * status < 500, is stored and replayed byte for byte, and nothing runs twice; §11: every write
 * the control database must never lose is backed by the tenant-side record. The kill test holds
 * control.db's write lock (as an admin command's transaction does) only to make the gap between
 * the answer and its copy wide enough to land a SIGKILL in it.
 */

afterAll(cleanup)

test('a 409 answered just before kill -9 is replayed after the restart, not run again', async () => {
  const env = processEnv(tempDir('pfin-refusal-'), { LOG_FORMAT: 'off' })
  const { key } = await ownerWithKey(env, 'Refused')
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
    // The failure this catches: { status: 201, replayed: null, sameBody: false, transactions: 1 }.
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
    // The failure this catches: refused keys run again on retry, and one of them writes the transaction.
    expect({ ranAgain, transactions: listed.json.data.length }).toEqual({ ranAgain: 0, transactions: 0 })
  } finally {
    await server.stop()
  }
}, 30_000)
