import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { ofxFile, type OfxRow } from '../imports/helpers.ts'
import { burst } from '../support/crash.ts'
import { adminJson, type Answer, call, cleanup, processEnv, type ServerProcess, startServer, tempDir, withDb } from '../support/processes.ts'

/**
 * CONTRACT §24 + §16 + §8 under `kill -9`: a real server process is SIGKILLed at a random moment
 * while it imports several 5,000-row statement files at once (distinct Idempotency-Keys and
 * FITIDs). Right after each kill, the owner's file holds each import whole (5,000 rows and its
 * idempotency record) or not at all, every import answered 200 is there, and the account's
 * balance is what its rows imply. After a restart every import is retried with its own key: a
 * committed one is replayed (byte for byte what was answered, if it was), a lost one runs now.
 * At the end every row is there once and the balance is exact to the cent.
 */

afterAll(cleanup)

const ROUNDS = Number(process.env.IMPORT_CRASH_ROUNDS ?? 2)
const FILES = 3
const ROWS = 5000
const UNITS_PER_CENT = 1_000_000n

const dataDir = tempDir('pfin-import-crash-')
const env = processEnv(dataDir)

interface Upload {
  label: string
  key: string
  body: string
  /** Σ amounts in cents, the bank's sign (negative = money out). */
  cents: bigint
  answeredBeforeKill?: Answer
  answer?: Answer
}

function makeUpload(label: string): Upload {
  let cents = 0n
  const rows: OfxRow[] = Array.from({ length: ROWS }, (_, n) => {
    const value = BigInt(((n * 7919) % 50_000) + 1) * (n % 9 === 0 ? 1n : -1n)
    cents += value
    const abs = value < 0n ? -value : value
    return {
      fitid: `${label}-${n}`,
      date: `2026-03-${String(1 + (n % 28)).padStart(2, '0')}`,
      amount: `${value < 0n ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`,
      name: `Shop ${n % 40}`,
    }
  })
  return { label, key: `import-${label}-${crypto.randomUUID()}`, body: ofxFile(rows), cents }
}

async function upload(url: string, apiKey: string, account: string, item: Upload): Promise<Answer> {
  try {
    const res = await fetch(`${url}/v1/accounts/${account}/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': item.key, 'content-type': 'application/x-ofx' },
      body: item.body,
      signal: AbortSignal.timeout(120_000),
    })
    return { status: res.status, text: await res.text(), headers: res.headers }
  } catch (error) {
    return { status: 0, text: String(error), headers: new Headers() }
  }
}

test(
  'SIGKILL during 5,000-row imports: each import all there or not at all; after restart and retries, every row once, replays identical, balance exact',
  async () => {
    const owner = (await adminJson(env, 'owner', 'create', '--name', 'Import Crash', '--currency', 'EUR')).id as string
    const apiKey = (await adminJson(env, 'key', 'create', '--owner', owner)).key as string
    const tenantFile = join(dataDir, 'tenants', `${owner}.db`)
    let server: ServerProcess = await startServer(env)
    const created = await call(server.url, 'POST', '/v1/accounts', {
      key: apiKey,
      body: '{"name":"Checking","type":"bank","balance":0,"currency":"EUR"}',
      idempotencyKey: 'acct',
    })
    expect(created.status).toBe(201)
    const account = JSON.parse(created.text).data.id as string

    // One import without a kill, to warm up and to know how long one takes on this machine.
    const warm = makeUpload('warm')
    const started = performance.now()
    warm.answer = await upload(server.url, apiKey, account, warm)
    const importMs = performance.now() - started
    expect(warm.answer.status).toBe(200)
    expect(JSON.parse(warm.answer.text).data.summary.created).toBe(ROWS)
    const uploads: Upload[] = [warm]

    const inspect = (round: Upload[]) =>
      withDb(
        tenantFile,
        (db) => {
          const rows = db.query<{ n: bigint }, [string]>('SELECT count(*) AS n FROM transactions WHERE external_id LIKE ?')
          const record = db.query<{ n: bigint }, [string]>('SELECT count(*) AS n FROM applied_requests WHERE key = ?')
          const found = round.map((item) => ({
            item,
            rows: Number(rows.get(`imp:${account}:fitid:${item.label}-%`)?.n),
            recorded: Number(record.get(item.key)?.n) === 1,
          }))
          const sums = db
            .query<{ balance: bigint; implied: bigint }, [string]>(
              'SELECT a.balance, (SELECT coalesce(sum(-t.amount), 0) FROM transactions t WHERE t.account_id = a.id) AS implied FROM accounts a WHERE a.id = ?',
            )
            .get(account)
          return { found, sums }
        },
        { safeIntegers: true },
      )

    let cut = 0
    for (let round = 1; round <= ROUNDS; round++) {
      const roundUploads = Array.from({ length: FILES }, (_, i) => makeUpload(`r${round}f${i}`))
      uploads.push(...roundUploads)
      await burst(
        server,
        roundUploads,
        async (item) => {
          const answer = await upload(server.url, apiKey, account, item)
          if (answer.status !== 0) item.answeredBeforeKill = answer
        },
        { concurrency: FILES, killAfterMs: importMs * (0.3 + Math.random() * (FILES - 1)) },
      )
      await server.proc.exited

      const { found, sums } = inspect(roundUploads)
      for (const { item, rows, recorded } of found) {
        if (rows !== 0 && rows !== ROWS) throw new Error(`round ${round}: import ${item.label} has ${rows} of its ${ROWS} rows after the kill`)
        expect(`${item.label} recorded ${recorded}`).toBe(`${item.label} recorded ${rows === ROWS}`)
        if (item.answeredBeforeKill) {
          expect(item.answeredBeforeKill.status).toBe(200)
          expect(`${item.label} answered, rows ${rows}`).toBe(`${item.label} answered, rows ${ROWS}`)
        } else cut += 1
      }
      expect(sums?.balance).toBe(sums?.implied)

      server = await startServer(env)
      for (const { item, rows } of found) {
        const retry = await upload(server.url, apiKey, account, item)
        expect(retry.status).toBe(200)
        expect(`${item.label} replayed ${retry.headers.get('idempotent-replayed')}`).toBe(`${item.label} replayed ${rows === ROWS ? 'true' : null}`)
        if (item.answeredBeforeKill) expect(retry.text).toBe(item.answeredBeforeKill.text)
        expect(JSON.parse(retry.text).data.summary.created).toBe(ROWS)
        item.answer = retry
      }
    }
    console.log(`import crash: ${ROUNDS} kills, ${ROUNDS * FILES} imports of ${ROWS} rows (one takes ~${Math.round(importMs)} ms), ${cut} cut off unanswered`)
    expect(cut).toBeGreaterThan(0)

    // Every import once more with its key: a byte-identical replay; and with a fresh key: all unchanged.
    for (const item of uploads) {
      const again = await upload(server.url, apiKey, account, item)
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      expect(again.text).toBe(item.answer?.text as string)
    }
    const fresh = await upload(server.url, apiKey, account, { ...(uploads[1] as Upload), key: crypto.randomUUID() })
    expect(JSON.parse(fresh.text).data.summary.unchanged).toBe(ROWS)

    const total = withDb(tenantFile, (db) => Number(db.query<{ n: bigint }, []>('SELECT count(*) AS n FROM transactions').get()?.n), { safeIntegers: true })
    expect(total).toBe(uploads.length * ROWS)
    const expected = uploads.reduce((sum, item) => sum + item.cents, 0n) * UNITS_PER_CENT
    const res = await call(server.url, 'GET', `/v1/accounts/${account}`, { key: apiKey })
    const balance = /"balance":(-?[0-9.]+)/.exec(res.text)?.[1] as string
    const [whole, fraction = ''] = balance.split('.')
    expect(BigInt(whole as string) * 100_000_000n + (balance.startsWith('-') ? -1n : 1n) * BigInt(fraction.padEnd(8, '0'))).toBe(expected)
    server.proc.kill('SIGTERM')
    await server.proc.exited
  },
  { timeout: 300_000 },
)
