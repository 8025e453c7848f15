import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { units } from '../transactions/helpers.ts'
import { accountsAB, burst, centsText } from '../support/crash.ts'
import { adminJson, type Answer, call, cleanup, processEnv, type ServerProcess, startServer, tempDir, withDb } from '../support/processes.ts'

/**
 * CONTRACT §16 + §8 under `kill -9`: a real server process (`bun src/main.ts serve`) is
 * SIGKILLed at a random moment while it commits several 500-item batches (distinct
 * Idempotency-Keys, sent at once). Right after each kill, before any restart, the owner's file
 * is read with bun:sqlite: every batch is there whole (500 rows and its idempotency record) or
 * not at all, every batch answered 200 is there, and balances and payee totals agree with the
 * rows the file holds. The server is restarted and every batch retried with its own key and
 * body: a committed one is replayed (byte for byte what was answered before the kill, if it
 * was), a lost one runs now; a second retry replays the first. At the end every batch is there
 * exactly once and balances and payee totals are exactly what the items imply, in integer cents.
 */

afterAll(cleanup)

const ROUNDS = Number(process.env.BATCH_CRASH_ROUNDS ?? 4)
const BATCHES = 6
const ITEMS = 500
const UNITS_PER_CENT = 1_000_000n
const PAYEES = ['Pingo Doce', 'Continente', 'Lidl', 'EDP', 'Galp']

const dataDir = tempDir('pfin-batch-crash-')
const env = processEnv(dataDir)

const rand = (n: number) => Math.floor(Math.random() * n)

interface Item {
  externalId: string
  account: 'A' | 'B'
  cents: bigint
  /** Credited to the other account when a transfer. */
  credit: bigint | null
  payee: string | null
}

interface Batch {
  label: string
  key: string
  items: Item[]
  body: string
  /** The answer received before a kill cut the server off, if any. */
  answeredBeforeKill?: Answer
  /** The first 200 after restarts; every later attempt must replay it byte for byte. */
  answer?: Answer
}

function makeBatch(label: string, accountIds: Record<'A' | 'B', string>): Batch {
  const items: Item[] = Array.from({ length: ITEMS }, (_, n) => {
    const account = rand(2) === 0 ? 'A' : 'B'
    const transfer = rand(8) === 0
    const cents = transfer ? BigInt(1 + rand(20_000)) : rand(6) === 0 ? -BigInt(1 + rand(200_000)) : BigInt(1 + rand(60_000))
    return {
      externalId: `${label}-${n}`,
      account,
      cents,
      credit: transfer ? cents + BigInt(rand(3)) : null,
      payee: transfer || rand(4) === 0 ? null : (PAYEES[rand(PAYEES.length)] as string),
    }
  })
  const json = items.map((item) => {
    const fields = [
      `"externalId":"${item.externalId}"`,
      `"accountId":"${accountIds[item.account]}"`,
      `"amount":${centsText(item.cents)}`,
      `"date":"2026-05-${String(1 + rand(28)).padStart(2, '0')}"`,
    ]
    if (item.payee) fields.push(`"payeeName":"${item.payee}"`)
    if (item.credit !== null)
      fields.push(
        '"isTransfer":true',
        `"transferToAccountId":"${accountIds[item.account === 'A' ? 'B' : 'A']}"`,
        `"destinationAmount":${centsText(item.credit)}`,
      )
    return `{${fields.join(',')}}`
  })
  return { label, key: `batch-${label}-${crypto.randomUUID()}`, items, body: `{"items":[${json.join(',')}]}` }
}

test(
  'SIGKILL during 500-item batch commits: each batch all there or not at all; after restart and retries, every batch exactly once, replays identical, money exact',
  async () => {
    const owner = (await adminJson(env, 'owner', 'create', '--name', 'Batch Crash', '--currency', 'EUR')).id as string
    const apiKey = (await adminJson(env, 'key', 'create', '--owner', owner)).key as string
    const tenantFile = join(dataDir, 'tenants', `${owner}.db`)
    let server: ServerProcess = await startServer(env)
    const send = (method: string, path: string, body?: string, idempotencyKey?: string) =>
      call(server.url, method, path, { key: apiKey, body, idempotencyKey, timeoutMs: 60_000 })

    const initial = { A: 10_000_000n, B: 250_000n } // cents
    const accountIds = await accountsAB(send, initial)

    // One batch without a kill, to warm up and to know how long a batch takes on this machine.
    const warm = makeBatch('warm', accountIds)
    const started = performance.now()
    warm.answer = await send('POST', '/v1/transactions/batch', warm.body, warm.key)
    const batchMs = performance.now() - started
    expect(warm.answer.status).toBe(200)
    const batches: Batch[] = [warm]

    /** Per batch: rows in the file, and whether its idempotency record is there. */
    const inspect = (round: Batch[]) =>
      withDb(
        tenantFile,
        (db) => {
          const rows = db.query<{ n: bigint }, [string]>('SELECT count(*) AS n FROM transactions WHERE external_id LIKE ?')
          const record = db.query<{ n: bigint }, [string]>('SELECT count(*) AS n FROM applied_requests WHERE key = ?')
          const found = round.map((batch) => ({ batch, rows: Number(rows.get(`${batch.label}-%`)?.n), recorded: Number(record.get(batch.key)?.n) === 1 }))
          // The file agrees with itself: balances and payee totals are what its rows imply.
          const sums = db
            .query<{ id: string; balance: bigint; implied: bigint }, []>(
              `SELECT a.id, a.balance,
                 (SELECT coalesce(sum(CASE WHEN t.account_id = a.id THEN -t.amount ELSE t.destination_amount END), 0) FROM transactions t WHERE t.account_id = a.id OR t.transfer_to_account_id = a.id) AS implied
               FROM accounts a`,
            )
            .all()
          const payees = db
            .query<{ name: string; transaction_count: bigint; total_spent: bigint; n: bigint; spent: bigint }, []>(
              `SELECT p.name, p.transaction_count, p.total_spent, count(t.id) AS n, coalesce(sum(CASE WHEN t.is_transfer = 0 AND t.amount > 0 THEN t.amount ELSE 0 END), 0) AS spent
               FROM payees p LEFT JOIN transactions t ON t.payee_id = p.id GROUP BY p.id`,
            )
            .all()
          return { found, sums, payees }
        },
        { safeIntegers: true },
      )

    let cut = 0
    let lost = 0
    let committed = 0
    for (let round = 1; round <= ROUNDS; round++) {
      const roundBatches = Array.from({ length: BATCHES }, (_, i) => makeBatch(`r${round}b${i}`, accountIds))
      batches.push(...roundBatches)
      // All of the round's batches at once, killed somewhere between the first commit and the last, at a random moment.
      await burst(
        server,
        roundBatches,
        async (batch) => {
          const answer = await send('POST', '/v1/transactions/batch', batch.body, batch.key)
          if (answer.status !== 0) batch.answeredBeforeKill = answer
        },
        { concurrency: BATCHES, killAfterMs: batchMs * (0.3 + Math.random() * (BATCHES - 1.5)) },
      )
      await server.proc.exited

      const { found, sums, payees } = inspect(roundBatches)
      for (const { batch, rows, recorded } of found) {
        if (rows !== 0 && rows !== ITEMS) throw new Error(`round ${round}: batch ${batch.label} has ${rows} of its ${ITEMS} rows after the kill`)
        expect(`${batch.label} recorded ${recorded}`).toBe(`${batch.label} recorded ${rows === ITEMS}`)
        if (batch.answeredBeforeKill) {
          expect(batch.answeredBeforeKill.status).toBe(200)
          expect(`${batch.label} answered, rows ${rows}`).toBe(`${batch.label} answered, rows ${ITEMS}`)
        } else cut += 1
        if (rows === 0) lost += 1
        else committed += 1
      }
      for (const account of sums) {
        const name = account.id === accountIds.A ? 'A' : 'B'
        expect(`${name} ${account.balance}`).toBe(`${name} ${initial[name] * UNITS_PER_CENT + account.implied}`)
      }
      for (const payee of payees) expect(`${payee.name} ${payee.transaction_count} ${payee.total_spent}`).toBe(`${payee.name} ${payee.n} ${payee.spent}`)

      server = await startServer(env)
      for (const { batch, rows } of found) {
        const retry = await send('POST', '/v1/transactions/batch', batch.body, batch.key)
        expect(retry.status).toBe(200)
        // Committed before the kill: replayed (what was answered then, if it was); lost: run now.
        expect(`${batch.label} replayed ${retry.headers.get('idempotent-replayed')}`).toBe(`${batch.label} replayed ${rows === ITEMS ? 'true' : null}`)
        if (batch.answeredBeforeKill) expect(retry.text).toBe(batch.answeredBeforeKill.text)
        const summary = JSON.parse(retry.text).summary
        expect(summary).toEqual({ created: ITEMS, updated: 0, unchanged: 0, matched: 0, skippedDeleted: 0, failed: 0 })
        batch.answer = retry
      }
    }
    console.log(
      `batch crash: ${ROUNDS} kills, ${ROUNDS * BATCHES} batches (one takes ~${Math.round(batchMs)} ms): ${committed} committed before the kill, ${lost} lost, ${cut} cut off unanswered`,
    )
    // The kills landed while batches were in flight.
    expect(cut).toBeGreaterThan(0)

    // Every batch once more: a byte-identical replay.
    for (const batch of batches) {
      const again = await send('POST', '/v1/transactions/batch', batch.body, batch.key)
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      expect(again.text).toBe(batch.answer?.text as string)
    }

    // Every batch exactly once, and the money exactly what the items say.
    const expected = { A: initial.A, B: initial.B }
    const payees = new Map<string, { count: number; spent: bigint }>()
    for (const batch of batches) {
      for (const item of batch.items) {
        expected[item.account] -= item.cents
        if (item.credit !== null) expected[item.account === 'A' ? 'B' : 'A'] += item.credit
        if (item.payee) {
          const totals = payees.get(item.payee) ?? { count: 0, spent: 0n }
          totals.count += 1
          if (item.credit === null && item.cents > 0n) totals.spent += item.cents
          payees.set(item.payee, totals)
        }
      }
    }
    const file = withDb(
      tenantFile,
      (db) => ({
        perBatch: batches.map((batch) =>
          Number(db.query<{ n: bigint }, [string]>('SELECT count(*) AS n FROM transactions WHERE external_id LIKE ?').get(`${batch.label}-%`)?.n),
        ),
        total: Number(db.query<{ n: bigint }, []>('SELECT count(*) AS n FROM transactions').get()?.n),
      }),
      { safeIntegers: true },
    )
    expect(file.perBatch).toEqual(batches.map(() => ITEMS))
    expect(file.total).toBe(batches.length * ITEMS)
    for (const name of ['A', 'B'] as const) {
      const res = await send('GET', `/v1/accounts/${accountIds[name]}`)
      const balance = units(/"balance":(-?[0-9.]+)/.exec(res.text)?.[1] ?? 'NaN')
      expect(`${name} ${balance}`).toBe(`${name} ${expected[name] * UNITS_PER_CENT}`)
    }
    const listed = JSON.parse((await send('GET', '/v1/payees?limit=200')).text).data as { name: string; transactionCount: number; totalSpent: number }[]
    for (const [name, totals] of payees) {
      const payee = listed.find((p) => p.name === name)
      expect({ name, count: payee?.transactionCount, spent: units(String(payee?.totalSpent)) }).toEqual({
        name,
        count: totals.count,
        spent: totals.spent * UNITS_PER_CENT,
      })
    }
    server.proc.kill('SIGTERM')
    await server.proc.exited
  },
  { timeout: 240_000 },
)
