import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { burst as sendBurst, centsText, dropControlAnswers, everyItem } from '../support/crash.ts'
import { adminJson, cleanup, processEnv, startServer as startProcessServer, tempDir, withDb } from '../support/processes.ts'

/**
 * CONTRACT §8: exactly once, even after `kill -9`. The real server runs as its own
 * process; a burst of idempotent creates is cut by SIGKILL (twice), the server is restarted on the
 * same DATA_DIR, and every request is retried with its original key and body until it succeeds.
 * Afterwards there is exactly one transaction per key, every retry of an answered request was a
 * byte-identical replay, and the balances add up to the cent.
 */

// Processes, environment and clean-up as every process-level suite runs them (test/support/processes.ts).
const dataDir = tempDir('pfin-crash-')
const env = processEnv(dataDir)
const admin = (...args: string[]) => adminJson(env, ...args)
const startServer = () => startProcessServer(env)
afterAll(cleanup)

interface Outcome {
  status: number
  text: string
  replayed: boolean
}

async function post(url: string, apiKey: string, path: string, idempotencyKey: string, body: string): Promise<Outcome> {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    body,
    signal: AbortSignal.timeout(15_000),
  })
  return { status: res.status, text: await res.text(), replayed: res.headers.get('idempotent-replayed') === 'true' }
}

const UNIT = 10n ** 8n
function balanceUnits(text: string): bigint {
  const m = /"balance":(-?\d+)(?:\.(\d+))?[,}]/.exec(text)
  if (!m) throw new Error(`no balance in ${text}`)
  const frac = (m[2] ?? '').padEnd(8, '0')
  const abs = BigInt(m[1]?.replace('-', '') ?? '0') * UNIT + BigInt(frac)
  return m[1]?.startsWith('-') ? -abs : abs
}

test('SIGKILL during a burst of idempotent creates: after restart and retries, exactly one transaction per key', async () => {
  const owner = await admin('owner', 'create', '--name', 'Crash Owner')
  const key = await admin('key', 'create', '--owner', owner.id as string)
  const apiKey = key.key as string

  let server = await startServer()
  const makeAccount = async (name: string, balance: string) => {
    const res = await post(server.url, apiKey, '/v1/accounts', crypto.randomUUID(), `{"name":"${name}","type":"bank","balance":${balance},"currency":"EUR"}`)
    expect(res.status).toBe(201)
    return JSON.parse(res.text).data.id as string
  }
  const source = await makeAccount('Source', '1000000.00')
  const destination = await makeAccount('Destination', '500.00')

  // 300 requests, each with its own key, a known amount and a marker in `note`; every 5th is a transfer
  const N = 300
  const requests = Array.from({ length: N }, (_, i) => {
    const transfer = i % 5 === 0
    const cents = transfer ? BigInt(1 + Math.floor(Math.random() * 50_000)) : BigInt(Math.floor(Math.random() * 100_000) - 20_000)
    const fields = [`"accountId":"${source}"`, `"amount":${centsText(cents)}`, '"date":"2026-03-01"', `"note":"crash-${i}"`]
    if (transfer) fields.push('"isTransfer":true', `"transferToAccountId":"${destination}"`)
    return { i, key: `crash-key-${i}-${crypto.randomUUID()}`, body: `{${fields.join(',')}}`, cents, transfer }
  })

  /** The first successful (201) answer of each request, and every later answer to it. */
  const answered = new Map<number, Outcome>()
  const laterAnswers = new Map<number, Outcome[]>()
  let unknownFate = 0
  /** Requests applied whose answer never reached the client: their first answer is already a replay. */
  let appliedUnseen = 0
  const record = (i: number, outcome: Outcome) => {
    const first = answered.get(i)
    if (!first) {
      answered.set(i, outcome)
      if (outcome.replayed) appliedUnseen++
    } else laterAnswers.set(i, [...(laterAnswers.get(i) ?? []), outcome])
  }

  /** Sends one request; false when the kill cut it off (it may or may not have been applied). */
  const attempt = async (req: (typeof requests)[number]): Promise<boolean> => {
    let outcome: Outcome
    try {
      outcome = await post(server.url, apiKey, '/v1/transactions', req.key, req.body)
    } catch {
      unknownFate++
      return false
    }
    if (outcome.status === 201) record(req.i, outcome)
    else if (outcome.status === 409 && outcome.text.includes('idempotency_key_in_progress')) {
      // retried in the next round
    } else throw new Error(`request ${req.i}: ${outcome.status} ${outcome.text}`)
    return true
  }
  /** Sends the given requests with `concurrency` workers; with `killAfter`, SIGKILLs the server once that many answers came back. */
  const burst = (pending: typeof requests, concurrency: number, killAfter?: number) =>
    sendBurst(server, pending, attempt, { concurrency, killAfterAnswers: killAfter })

  // Round 1: the burst, killed after ~80–120 answers.
  const round1 = await burst(requests, 32, 80 + Math.floor(Math.random() * 40))
  expect(round1.killed).toBe(true)
  await server.proc.exited
  expect(server.proc.signalCode).toBe('SIGKILL')
  const afterRound1 = answered.size
  expect(afterRound1).toBeGreaterThan(0)
  expect(afterRound1).toBeLessThan(N)

  // What the files hold after the kill: every write the tenant committed carries its key.
  const tenantFile = join(dataDir, 'tenants', `${owner.id}.db`)
  const tenantKeys = new Set(
    withDb(tenantFile, (db) =>
      db
        .query('SELECT key FROM applied_requests')
        .all()
        .map((r) => (r as { key: string }).key),
    ),
  )
  const tenantTxns = withDb(tenantFile, (db) => (db.query('SELECT count(*) AS n FROM transactions').get() as { n: number }).n)
  expect(tenantTxns).toBe(requests.filter((r) => tenantKeys.has(r.key)).length)
  for (const i of answered.keys()) expect(tenantKeys.has((requests[i] as (typeof requests)[number]).key)).toBe(true)
  // The worst case of CONTRACT §11: retries must find the responses in the tenant file and still not write twice.
  const lost = dropControlAnswers(dataDir, owner.id as string)
  expect(lost).toBeGreaterThan(0)

  // Rounds 2 and 3: restart, retry every request (answered or not) in a random order, kill again part way.
  for (const round of [2, 3]) {
    server = await startServer()
    await burst(
      [...requests].sort(() => Math.random() - 0.5),
      32,
      60 + Math.floor(Math.random() * 60),
    )
    await server.proc.exited
    expect(server.proc.signalCode).toBe('SIGKILL')
    expect(round).toBeGreaterThan(1)
  }

  // Final round: restart and retry EVERY request until each has an answer, then once more.
  server = await startServer()
  for (let attempt = 0; attempt < 20; attempt++) {
    const missing = requests.filter((r) => !answered.has(r.i))
    if (missing.length === 0) break
    await burst(missing, 32)
  }
  expect(answered.size).toBe(N)
  await burst(requests, 32)

  // Every retry of an answered request was a replay of exactly the same response.
  let replays = 0
  for (const [i, later] of laterAnswers) {
    const first = answered.get(i) as Outcome
    for (const outcome of later) {
      expect(outcome.replayed).toBe(true)
      expect(outcome.text).toBe(first.text)
      replays++
    }
  }
  expect(replays).toBeGreaterThanOrEqual(N) // at least the final full round

  // Exactly one transaction per key: list everything and count by the note marker.
  const listed = await everyItem<{ id: string; note: string }>(server.url, apiKey, '/v1/transactions')
  const byNote = new Map<string, string[]>()
  for (const t of listed) byNote.set(t.note, [...(byNote.get(t.note) ?? []), t.id])
  const duplicated = [...byNote].filter(([, ids]) => ids.length !== 1)
  expect(duplicated).toEqual([])
  expect(listed.length).toBe(N)
  for (const req of requests) {
    const ids = byNote.get(`crash-${req.i}`)
    expect(ids?.length).toBe(1)
    expect(JSON.parse((answered.get(req.i) as Outcome).text).data.id).toBe(ids?.[0])
  }

  // The balances add up exactly.
  const spent = requests.reduce((sum, r) => sum + r.cents, 0n) * 1_000_000n
  const moved = requests.filter((r) => r.transfer).reduce((sum, r) => sum + r.cents, 0n) * 1_000_000n
  const get = async (id: string) =>
    balanceUnits(await (await fetch(`${server.url}/v1/accounts/${id}`, { headers: { authorization: `Bearer ${apiKey}` } })).text())
  expect(await get(source)).toBe(1_000_000n * UNIT - spent)
  expect(await get(destination)).toBe(500n * UNIT + moved)

  console.log(
    `crash test: ${afterRound1} answered before the first kill, ${unknownFate} requests cut off in flight (${appliedUnseen} of them had been applied), ${replays} replays checked, ${lost} control-side records dropped before the retries`,
  )
  server.proc.kill('SIGTERM')
  expect(await server.proc.exited).toBe(0)
}, 60_000)
