import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { adminJson, type Answer, call, cleanup, processEnv, type ServerProcess, startServer, tempDir, withDb } from '../support/processes.ts'

/**
 * CONTRACT §16, §21, §22 under `kill -9`: a real server process is SIGKILLed at a random moment
 * while it commits several batches whose items carry legs and tags. Right after each kill the
 * owner's file is read with bun:sqlite: every batch is there whole (its rows, 3 legs and 2 tag
 * links each, its idempotency record) or not at all, and the balances, payee totals and tag
 * counts are what the rows, legs and links in the file imply. After a restart every batch is
 * retried with its own key: a committed one replays, a lost one runs now. At the end every batch
 * is there exactly once.
 */

afterAll(cleanup)

const ROUNDS = Number(process.env.SPLIT_CRASH_ROUNDS ?? 3)
const BATCHES = 5
const ITEMS = 200
const PAYEES = ['Pingo Doce', 'Continente', 'Lidl']
const TAGS = ['Lisbon 2026', 'Receipts', 'Work']

const dataDir = tempDir('pfin-split-crash-')
const env = processEnv(dataDir)

const rand = (n: number) => Math.floor(Math.random() * n)
const cents = (value: number) => `${Math.trunc(value / 100)}.${String(value % 100).padStart(2, '0')}`

interface Batch {
  label: string
  key: string
  body: string
  answeredBeforeKill?: Answer
  answer?: Answer
}

/** Items of three legs (one of them a refund) and two tags, each leg summing exactly to its item. */
function makeBatch(label: string, accountId: string): Batch {
  const items = Array.from({ length: ITEMS }, (_, n) => {
    const [a, b, refund] = [1 + rand(5000), 1 + rand(5000), rand(300)]
    const legs = [
      `{"amount":${cents(a)},"categoryId":"cat_sys_groceries"}`,
      `{"amount":${cents(b)},"payeeName":"${PAYEES[rand(PAYEES.length)]}"}`,
      `{"amount":-${cents(refund)},"note":"refund"}`,
    ]
    const tags = [TAGS[n % 3], TAGS[(n + 1) % 3]].map((name) => `"${name}"`).join(',')
    const total = a + b - refund
    const amount = total < 0 ? `-${cents(-total)}` : cents(total)
    return `{"externalId":"${label}-${n}","accountId":"${accountId}","amount":${amount},"date":"2026-05-${String(1 + rand(28)).padStart(2, '0')}","payeeName":"${PAYEES[n % PAYEES.length]}","tagNames":[${tags}],"splits":[${legs.join(',')}]}`
  })
  return { label, key: `split-batch-${label}-${crypto.randomUUID()}`, body: `{"items":[${items.join(',')}]}` }
}

/** What the file says about each batch, and whether its totals agree with its rows. */
function inspect(tenantFile: string, round: Batch[]) {
  return withDb(
    tenantFile,
    (db) => {
      const count = (sql: string, label: string) => Number(db.query<{ n: bigint }, [string]>(sql).get(`${label}-%`)?.n)
      const found = round.map((batch) => ({
        batch,
        rows: count('SELECT count(*) AS n FROM transactions WHERE external_id LIKE ?', batch.label),
        legs: count('SELECT count(*) AS n FROM transaction_splits s JOIN transactions t ON t.id = s.transaction_id WHERE t.external_id LIKE ?', batch.label),
        links: count('SELECT count(*) AS n FROM transaction_tags g JOIN transactions t ON t.id = g.transaction_id WHERE t.external_id LIKE ?', batch.label),
        recorded: Number(db.query<{ n: bigint }, [string]>('SELECT count(*) AS n FROM applied_requests WHERE key = ?').get(batch.key)?.n) === 1,
      }))
      const balance = db
        .query<{ balance: bigint; implied: bigint }, []>(
          'SELECT a.balance, (SELECT coalesce(sum(-t.amount), 0) FROM transactions t WHERE t.account_id = a.id) AS implied FROM accounts a',
        )
        .get()
      // Each leg counts toward its own payee, else its transaction's; a transaction once per payee it names.
      const payees = db
        .query<{ name: string; transaction_count: bigint; total_spent: bigint; n: bigint; spent: bigint }, []>(
          `WITH touches AS (
             SELECT t.id AS txn, t.payee_id AS payee, 0 AS spent FROM transactions t WHERE t.payee_id IS NOT NULL
             UNION ALL
             SELECT s.transaction_id, coalesce(s.payee_id, t.payee_id), CASE WHEN s.amount > 0 THEN s.amount ELSE 0 END
             FROM transaction_splits s JOIN transactions t ON t.id = s.transaction_id WHERE coalesce(s.payee_id, t.payee_id) IS NOT NULL)
           SELECT p.name, p.transaction_count, p.total_spent,
             (SELECT count(DISTINCT txn) FROM touches WHERE payee = p.id) AS n,
             (SELECT coalesce(sum(spent), 0) FROM touches WHERE payee = p.id) AS spent
           FROM payees p`,
        )
        .all()
      const tags = db
        .query<{ name: string; transaction_count: bigint; n: bigint }, []>(
          'SELECT g.name, g.transaction_count, (SELECT count(*) FROM transaction_tags l WHERE l.tag_id = g.id) AS n FROM tags g',
        )
        .all()
      return { found, balance, payees, tags }
    },
    { safeIntegers: true },
  )
}

test(
  'SIGKILL during batches of split, tagged items: each batch all there or not at all, totals agree with the file; after retries every batch exactly once',
  async () => {
    const owner = (await adminJson(env, 'owner', 'create', '--name', 'Split Crash', '--currency', 'EUR')).id as string
    const apiKey = (await adminJson(env, 'key', 'create', '--owner', owner)).key as string
    const tenantFile = join(dataDir, 'tenants', `${owner}.db`)
    let server: ServerProcess = await startServer(env)
    const send = (method: string, path: string, body?: string, idempotencyKey?: string) =>
      call(server.url, method, path, { key: apiKey, body, idempotencyKey, timeoutMs: 60_000 })
    const created = await send('POST', '/v1/accounts', '{"name":"Main","type":"bank","balance":1000,"currency":"EUR"}', crypto.randomUUID())
    expect(created.status).toBe(201)
    const accountId = JSON.parse(created.text).data.id as string

    const warm = makeBatch('warm', accountId)
    const started = performance.now()
    warm.answer = await send('POST', '/v1/transactions/batch', warm.body, warm.key)
    const batchMs = performance.now() - started
    expect(warm.answer.status).toBe(200)
    const batches: Batch[] = [warm]

    let cut = 0
    for (let round = 1; round <= ROUNDS; round++) {
      const roundBatches = Array.from({ length: BATCHES }, (_, i) => makeBatch(`r${round}b${i}`, accountId))
      batches.push(...roundBatches)
      const inFlight = roundBatches.map(async (batch) => {
        const answer = await send('POST', '/v1/transactions/batch', batch.body, batch.key)
        if (answer.status !== 0) batch.answeredBeforeKill = answer
      })
      await Bun.sleep(batchMs * (0.3 + Math.random() * (BATCHES - 1.5)))
      server.proc.kill('SIGKILL')
      await server.proc.exited
      await Promise.all(inFlight)

      const { found, balance, payees, tags } = inspect(tenantFile, roundBatches)
      for (const { batch, rows, legs, links, recorded } of found) {
        const whole = rows === ITEMS
        expect(`${batch.label}: ${rows} rows, ${legs} legs, ${links} tag links, recorded ${recorded}`).toBe(
          whole
            ? `${batch.label}: ${ITEMS} rows, ${3 * ITEMS} legs, ${2 * ITEMS} tag links, recorded true`
            : `${batch.label}: 0 rows, 0 legs, 0 tag links, recorded false`,
        )
        if (batch.answeredBeforeKill)
          expect(`${batch.label} answered ${batch.answeredBeforeKill.status}, whole ${whole}`).toBe(`${batch.label} answered 200, whole true`)
        else cut += 1
      }
      expect(balance?.balance).toBe(100_000_000_000n + (balance?.implied ?? 0n))
      for (const payee of payees) expect(`${payee.name} ${payee.transaction_count} ${payee.total_spent}`).toBe(`${payee.name} ${payee.n} ${payee.spent}`)
      for (const tag of tags) expect(`${tag.name} ${tag.transaction_count}`).toBe(`${tag.name} ${tag.n}`)

      server = await startServer(env)
      for (const { batch, rows } of found) {
        const retry = await send('POST', '/v1/transactions/batch', batch.body, batch.key)
        expect(retry.status).toBe(200)
        expect(`${batch.label} replayed ${retry.headers.get('idempotent-replayed')}`).toBe(`${batch.label} replayed ${rows === ITEMS ? 'true' : null}`)
        if (batch.answeredBeforeKill) expect(retry.text).toBe(batch.answeredBeforeKill.text)
        expect(JSON.parse(retry.text).summary).toEqual({ created: ITEMS, updated: 0, unchanged: 0, matched: 0, skippedDeleted: 0, failed: 0 })
        batch.answer = retry
      }
    }
    console.log(`split batch crash: ${ROUNDS} kills, ${ROUNDS * BATCHES} batches of ${ITEMS} (one takes ~${Math.round(batchMs)} ms), ${cut} cut off unanswered`)
    expect(cut).toBeGreaterThan(0)

    for (const batch of batches) {
      const again = await send('POST', '/v1/transactions/batch', batch.body, batch.key)
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      expect(again.text).toBe(batch.answer?.text as string)
    }
    const { found, balance, payees, tags } = inspect(tenantFile, batches)
    expect(found.map(({ rows, legs, links }) => [rows, legs, links])).toEqual(batches.map(() => [ITEMS, 3 * ITEMS, 2 * ITEMS]))
    expect(balance?.balance).toBe(100_000_000_000n + (balance?.implied ?? 0n))
    for (const payee of payees) expect(`${payee.name} ${payee.transaction_count} ${payee.total_spent}`).toBe(`${payee.name} ${payee.n} ${payee.spent}`)
    for (const tag of tags) expect(`${tag.name} ${tag.transaction_count}`).toBe(`${tag.name} ${tag.n}`)
    expect(tags.map((tag) => Number(tag.transaction_count)).reduce((a, b) => a + b, 0)).toBe(2 * ITEMS * batches.length)
    server.proc.kill('SIGTERM')
    await server.proc.exited
  },
  { timeout: 240_000 },
)
