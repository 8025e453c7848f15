import { Database } from 'bun:sqlite'
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import { call, cleanup, processEnv, startServer, tempDir, withDb, ownerWithKey } from '../support/processes.ts'

/**
 * Another process holding control.db's write lock (an admin command's transaction) never holds
 * the server's answers (CONTRACT §14): the background writes to control.db — rate-limit counters,
 * last-use times, copies of stored answers, the next auto-posting dates — do not wait for the
 * lock on the thread that answers every request; they are kept and written once it is free. Nor
 * does the housekeeping (expired answers, counters and tokens, free pages given back): its first
 * round, two seconds after start, falls inside the lock held here, and a busy round is skipped.
 * Before, the first of them to run while the lock was held blocked the server for SQLite's busy
 * timeout (10 s): every owner's requests waited behind it.
 */

setDefaultTimeout(60_000)
afterAll(cleanup)

test('requests are answered at once while another process holds control.db, and what was queued is written after', async () => {
  const env = processEnv(tempDir('pfin-control-lock-'), { LOG_FORMAT: 'off' })
  const { key } = await ownerWithKey(env, 'Locked')
  const server = await startServer(env)
  const controlPath = join(env.DATA_DIR as string, 'control.db')
  try {
    // The key verified and the owner's file open before the lock: what follows needs no control.db write to answer.
    expect((await call(server.url, 'GET', '/v1/me', { key })).status).toBe(200)
    const account = JSON.parse(
      (
        await call(server.url, 'POST', '/v1/accounts', {
          key,
          idempotencyKey: 'acct',
          body: JSON.stringify({ name: 'Main', type: 'bank', balance: 0, currency: 'EUR' }),
        })
      ).text,
    ).data

    const control = new Database(controlPath)
    const slowest: number[] = []
    try {
      control.run('BEGIN IMMEDIATE')
      // 2.5 s under the lock: past the server's write-behind (every second) and a copy of each answer.
      const until = Date.now() + 2500
      let n = 0
      while (Date.now() < until) {
        const started = Date.now()
        const write = await call(server.url, 'POST', '/v1/transactions', {
          key,
          idempotencyKey: `locked-${n}`,
          body: JSON.stringify({ accountId: account.id, amount: 1, date: '2026-11-26' }),
          timeoutMs: 8000,
        })
        const read = await call(server.url, 'GET', '/v1/me', { key, timeoutMs: 8000 })
        slowest.push(Date.now() - started)
        expect([write.status, read.status]).toEqual([201, 200])
        n++
        await Bun.sleep(100)
      }
    } finally {
      control.run('ROLLBACK')
      control.close()
    }
    // Each pair answered promptly: nothing waited for the lock (the busy timeout is 10 s).
    expect(Math.max(...slowest)).toBeLessThan(2000)

    // Once the lock is free, the queued copies and counters reach control.db.
    const deadline = Date.now() + 5000
    let copies = 0
    let counted = 0
    while (Date.now() < deadline) {
      ;[copies, counted] = withDb(
        controlPath,
        (db) => [
          Number(db.query<{ n: number }, []>("SELECT count(*) AS n FROM idempotency_records WHERE key LIKE 'locked-%'").get()?.n),
          Number(db.query<{ n: number }, []>('SELECT coalesce(sum(minute_count), 0) AS n FROM rate_limit_counters').get()?.n),
        ],
        { readonly: true },
      )
      if (copies === slowest.length && counted >= slowest.length * 2) break
      await Bun.sleep(200)
    }
    expect(copies).toBe(slowest.length)
    expect(counted).toBeGreaterThanOrEqual(slowest.length * 2)
  } finally {
    server.proc.kill('SIGTERM')
    await server.proc.exited
  }
})
