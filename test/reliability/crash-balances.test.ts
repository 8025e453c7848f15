import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { accountsAB, burst as sendBurst, centsText, dropControlAnswers, everyItem } from '../support/crash.ts'
import { adminJson, type Answer, call, cleanup, processEnv, type ServerProcess, startServer, tempDir, withDb } from '../support/processes.ts'

/**
 * CONTRACT §8, §11, §14: exactly once under `kill -9`, for writes of every kind. A
 * burst of creates (with payeeName), transfers between two accounts, upserts by externalId (new
 * and existing), PATCHes and DELETEs of transactions is cut by SIGKILL twice; after each kill the
 * owner's file must already be self-consistent (balances and payee totals agree with the rows it
 * holds). The server is restarted on the same DATA_DIR and every operation is retried with its
 * original Idempotency-Key and body until answered. Afterwards: no duplicate, no lost write, every
 * retry of an answered request a byte-identical replay, and the account balances and payee
 * transactionCount/totalSpent exactly what the operations imply — computed here in integer cents.
 */

afterAll(cleanup)

const dataDir = tempDir('pfin-crash-balances-')
const env = processEnv(dataDir)
const UNITS_PER_CENT = 1_000_000n
const PAYEES = ['Pingo Doce', 'Continente', 'Lidl', 'EDP', 'Galp']
const DATE = '2026-04-01'

/** A JSON number from the API as exact 1e-8 units (the server prints at most 8 decimals). */
function units(value: unknown): bigint {
  if (typeof value !== 'number') throw new Error(`not a number: ${JSON.stringify(value)}`)
  const text = String(value)
  const m = /^(-?)(\d+)(?:\.(\d{1,8}))?$/.exec(text)
  if (!m) throw new Error(`cannot read ${text} exactly`)
  const abs = BigInt(m[2] as string) * 100_000_000n + BigInt((m[3] ?? '').padEnd(8, '0'))
  return m[1] ? -abs : abs
}

const rand = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1))
/** A non-zero amount in cents: mostly expenses, some income. */
const someCents = () => BigInt(rand(1, 9) === 1 ? -rand(100, 200_000) : rand(1, 80_000))

/** What a transaction should look like at the end, as the operations imply. */
interface Expected {
  account: 'A' | 'B'
  cents: bigint
  payee: string | null
  transfer: boolean
  note: string
}

interface Op {
  i: number
  kind: 'create' | 'transfer' | 'upsert-new' | 'upsert-update' | 'patch' | 'delete'
  method: 'POST' | 'PATCH' | 'DELETE'
  path: string
  body?: string
  idempotencyKey?: string
  /** The first answer that says the operation took effect. */
  answer?: Answer & { replayed: boolean }
  later: (Answer & { replayed: boolean })[]
  /** Some attempt was cut off by a kill: it may or may not have been applied. */
  cut: boolean
}

test('SIGKILL during a burst of mixed writes: after restarts and retries, no duplicate, no lost write, balances and payee totals exact', async () => {
  const owner = (await adminJson(env, 'owner', 'create', '--name', 'Crash Balances', '--currency', 'EUR')).id as string
  const apiKey = (await adminJson(env, 'key', 'create', '--owner', owner)).key as string
  const tenantFile = join(dataDir, 'tenants', `${owner}.db`)
  let server: ServerProcess = await startServer(env)
  const send = (method: string, path: string, body?: string, idempotencyKey?: string) => call(server.url, method, path, { key: apiKey, body, idempotencyKey })

  const initial = { A: 100_000_000n, B: 50_000n } // cents
  const accountIds = await accountsAB(send, initial)

  // The existing transactions the burst will change: 0–19 have an externalId (upserted), 20–39 are
  // patched, 40–54 deleted, 55–59 left alone. Made before the burst and acknowledged.
  const expected = new Map<string, Expected>() // by transaction id, or by `op:<i>` for new ones
  const base: { id: string; externalId: string | null }[] = []
  for (let b = 0; b < 60; b++) {
    const cents = someCents()
    const payee = PAYEES[b % PAYEES.length] as string
    const externalId = b < 20 ? `ext-${b}-${crypto.randomUUID()}` : null
    const fields = [`"accountId":"${accountIds.A}"`, `"amount":${centsText(cents)}`, `"date":"${DATE}"`, `"payeeName":"${payee}"`, `"note":"base-${b}"`]
    if (externalId) fields.push(`"externalId":"${externalId}"`)
    const res = await send('POST', externalId ? '/v1/transactions/upsert' : '/v1/transactions', `{${fields.join(',')}}`, crypto.randomUUID())
    expect(res.status).toBe(201)
    const id = JSON.parse(res.text).data.id as string
    base.push({ id, externalId })
    expected.set(id, { account: 'A', cents, payee, transfer: false, note: `base-${b}` })
  }

  // The burst: 170 operations, each with what it will leave behind.
  const ops: Op[] = []
  const effects = new Map<number, (model: Map<string, Expected>, i: number) => void>()
  const add = (kind: Op['kind'], method: Op['method'], path: string, body: string | undefined, effect: (model: Map<string, Expected>, i: number) => void) => {
    const i = ops.length
    ops.push({ i, kind, method, path, body, idempotencyKey: method === 'DELETE' ? undefined : `op-${i}-${crypto.randomUUID()}`, later: [], cut: false })
    effects.set(i, effect)
  }
  for (let n = 0; n < 60; n++) {
    const cents = someCents()
    const account = n % 4 === 0 ? 'B' : 'A'
    const payee = PAYEES[n % PAYEES.length] as string
    add(
      'create',
      'POST',
      '/v1/transactions',
      `{"accountId":"${accountIds[account]}","amount":${centsText(cents)},"date":"${DATE}","payeeName":"${payee}","note":"op-${ops.length}"}`,
      (m, i) => m.set(`op:${i}`, { account, cents, payee, transfer: false, note: `op-${i}` }),
    )
  }
  for (let n = 0; n < 30; n++) {
    const cents = BigInt(rand(1, 50_000))
    const payee = n % 2 ? (PAYEES[n % PAYEES.length] as string) : null
    const fields = [
      `"accountId":"${accountIds.A}"`,
      `"amount":${centsText(cents)}`,
      `"date":"${DATE}"`,
      '"isTransfer":true',
      `"transferToAccountId":"${accountIds.B}"`,
      `"note":"op-${ops.length}"`,
    ]
    if (payee) fields.push(`"payeeName":"${payee}"`)
    add('transfer', 'POST', '/v1/transactions', `{${fields.join(',')}}`, (m, i) =>
      m.set(`op:${i}`, { account: 'A', cents, payee, transfer: true, note: `op-${i}` }),
    )
  }
  for (let n = 0; n < 30; n++) {
    const cents = someCents()
    const payee = PAYEES[(n + 2) % PAYEES.length] as string
    const account = n % 3 === 0 ? 'B' : 'A'
    add(
      'upsert-new',
      'POST',
      '/v1/transactions/upsert',
      `{"externalId":"new-${n}-${crypto.randomUUID()}","accountId":"${accountIds[account]}","amount":${centsText(cents)},"date":"${DATE}","payeeName":"${payee}","note":"op-${ops.length}"}`,
      (m, i) => m.set(`op:${i}`, { account, cents, payee, transfer: false, note: `op-${i}` }),
    )
  }
  for (let b = 0; b < 15; b++) {
    const { id, externalId } = base[b] as { id: string; externalId: string }
    const cents = someCents()
    const payee = PAYEES[(b + 1) % PAYEES.length] as string
    const account = b % 2 ? 'B' : 'A' // half of them move to the other account
    add(
      'upsert-update',
      'POST',
      '/v1/transactions/upsert',
      `{"externalId":"${externalId}","accountId":"${accountIds[account]}","amount":${centsText(cents)},"date":"${DATE}","payeeName":"${payee}"}`,
      (m) => m.set(id, { ...(m.get(id) as Expected), account, cents, payee }),
    )
  }
  for (let b = 20; b < 40; b++) {
    const { id } = base[b] as { id: string }
    const cents = someCents()
    const payee = b % 2 ? (PAYEES[(b + 3) % PAYEES.length] as string) : null
    add('patch', 'PATCH', `/v1/transactions/${id}`, payee ? `{"amount":${centsText(cents)},"payeeName":"${payee}"}` : `{"amount":${centsText(cents)}}`, (m) => {
      const before = m.get(id) as Expected
      m.set(id, { ...before, cents, payee: payee ?? before.payee })
    })
  }
  for (let b = 40; b < 55; b++) {
    const { id } = base[b] as { id: string }
    add('delete', 'DELETE', `/v1/transactions/${id}`, undefined, (m) => m.delete(id))
  }
  // What every operation, applied exactly once, leaves behind (the order does not matter: each changes its own transaction).
  const model = new Map(expected)
  for (const op of ops) effects.get(op.i)?.(model, op.i)

  const problems: string[] = []
  let unknownFate = 0
  let appliedUnseen = 0

  const attempt = async (op: Op): Promise<void> => {
    const res = await send(op.method, op.path, op.body, op.idempotencyKey)
    if (res.status === 0) {
      op.cut = true
      unknownFate++
      return
    }
    const answer = { ...res, replayed: res.headers.get('idempotent-replayed') === 'true' }
    const ok =
      op.method === 'DELETE'
        ? res.status === 200
        : op.kind === 'create' || op.kind === 'transfer' || op.kind === 'upsert-new'
          ? res.status === 201
          : res.status === 200
    if (ok) {
      if (!op.answer) {
        op.answer = answer
        if (answer.replayed) appliedUnseen++
      } else op.later.push(answer)
    } else if (op.method === 'DELETE' && res.status === 404) {
      // already deleted: by an earlier answered attempt, or by one cut off by the kill
      if (!op.answer && !op.cut) problems.push(`op ${op.i}: DELETE 404 although no earlier attempt could have applied it`)
      if (!op.answer && op.cut) {
        op.answer = answer
        appliedUnseen++
      }
    } else if (res.status === 409 && res.text.includes('idempotency_key_in_progress')) {
      // retried in the next round
    } else problems.push(`op ${op.i} (${op.kind}): ${res.status} ${res.text.slice(0, 300)}`)
  }

  /** Sends the ops with `concurrency` workers; with `killAfter`, SIGKILLs the server after that many attempts, mid-burst. */
  const burst = async (pending: Op[], concurrency: number, killAfter?: number) =>
    (await sendBurst(server, pending, attempt, { concurrency, killAfterAnswers: killAfter })).killed

  /** After a kill, the owner's file alone must be consistent: balances and payee totals agree with its rows. */
  const fileConsistent = (when: string) =>
    withDb(
      tenantFile,
      (db) => {
        const cents = (u: bigint) => {
          if (u % UNITS_PER_CENT !== 0n) problems.push(`${when}: ${u} units is not whole cents`)
          return u / UNITS_PER_CENT
        }
        const rows = db.query('SELECT account_id, payee_id, amount, is_transfer, transfer_to_account_id, destination_amount FROM transactions').all() as {
          account_id: string
          payee_id: string | null
          amount: bigint
          is_transfer: bigint
          transfer_to_account_id: string | null
          destination_amount: bigint | null
        }[]
        for (const name of ['A', 'B'] as const) {
          const id = accountIds[name]
          let want = initial[name]
          for (const r of rows) {
            if (r.account_id === id) want -= cents(r.amount)
            if (r.transfer_to_account_id === id && r.destination_amount !== null) want += cents(r.destination_amount)
          }
          const got = cents((db.query('SELECT balance FROM accounts WHERE id = ?').get(id) as { balance: bigint }).balance)
          if (got !== want) problems.push(`${when}: file balance of ${name} is ${centsText(got)}, its rows imply ${centsText(want)}`)
        }
        for (const p of db.query('SELECT id, name, transaction_count, total_spent FROM payees').all() as {
          id: string
          name: string
          transaction_count: bigint
          total_spent: bigint
        }[]) {
          const mine = rows.filter((r) => r.payee_id === p.id)
          const spent = mine.filter((r) => r.is_transfer === 0n && r.amount > 0n).reduce((s, r) => s + cents(r.amount), 0n)
          if (p.transaction_count !== BigInt(mine.length) || cents(p.total_spent) !== spent) {
            problems.push(
              `${when}: payee ${p.name} holds count ${p.transaction_count} / spent ${centsText(cents(p.total_spent))}, its rows imply ${mine.length} / ${centsText(spent)}`,
            )
          }
        }
      },
      { safeIntegers: true },
    )

  const shuffled = () => [...ops].sort(() => Math.random() - 0.5)

  // Round 1: the burst in order of kinds mixed at random, killed after ~60–100 answers.
  expect(await burst(shuffled(), 24, rand(60, 100))).toBe(true)
  await server.proc.exited
  expect(server.proc.signalCode).toBe('SIGKILL')
  const answeredBeforeKill = ops.filter((o) => o.answer).length
  expect(answeredBeforeKill).toBeLessThan(ops.length)
  fileConsistent('after the first kill')
  // As in the crash test: the control copy of the idempotency records is lost (§11); retries must heal from the file.
  const dropped = dropControlAnswers(dataDir, owner)

  // Round 2: restart, retry everything in a random order, kill again part way.
  server = await startServer(env)
  await burst(shuffled(), 24, rand(40, 90))
  await server.proc.exited
  expect(server.proc.signalCode).toBe('SIGKILL')
  fileConsistent('after the second kill')

  // Final: restart, retry until every operation is answered, then everything once more.
  server = await startServer(env)
  for (let round = 0; round < 20 && ops.some((o) => !o.answer); round++)
    await burst(
      ops.filter((o) => !o.answer),
      24,
    )
  expect(ops.filter((o) => !o.answer).map((o) => o.i)).toEqual([])
  await burst(ops, 24)

  // Every later answer to a POST/PATCH is a replay of the first, byte for byte; a repeated DELETE finds nothing.
  let replays = 0
  for (const op of ops) {
    for (const later of op.later) {
      if (op.method === 'DELETE') problems.push(`op ${op.i}: a repeated DELETE answered ${later.status}`)
      else if (!later.replayed || later.text !== op.answer?.text) problems.push(`op ${op.i} (${op.kind}): a retry was not a byte-identical replay`)
      else replays++
    }
  }

  // The transactions as listed: exactly the model, no duplicate, nothing lost.
  const listed = await everyItem<{ id: string; accountId: string; amount: number; payeeId: string | null; isTransfer: boolean; note: string | null }>(
    server.url,
    apiKey,
    '/v1/transactions',
  )
  const payeeRes = await send('GET', '/v1/payees?limit=200')
  expect(payeeRes.status).toBe(200)
  const payees = (JSON.parse(payeeRes.text) as { data: { id: string; name: string; transactionCount: number; totalSpent: number }[] }).data
  const payeeName = new Map(payees.map((p) => [p.id, p.name]))
  const byNote = new Map<string, number>()
  for (const t of listed) byNote.set(t.note ?? '', (byNote.get(t.note ?? '') ?? 0) + 1)
  const duplicates = [...byNote].filter(([, n]) => n > 1).map(([note, n]) => `${note} ×${n}`)
  const accountName = (id: string) => (id === accountIds.A ? 'A' : id === accountIds.B ? 'B' : id)
  for (const [k, want] of model) {
    const found = k.startsWith('op:') ? listed.filter((t) => t.note === want.note) : listed.filter((t) => t.id === k)
    if (found.length === 0) {
      problems.push(`lost: ${k} (${want.note}) is missing`)
      continue
    }
    const t = found[0] as (typeof listed)[number]
    const got = `${accountName(t.accountId)} ${centsText(units(t.amount) / UNITS_PER_CENT)} ${t.payeeId ? payeeName.get(t.payeeId) : null} transfer=${t.isTransfer}`
    const wanted = `${want.account} ${centsText(want.cents)} ${want.payee} transfer=${want.transfer}`
    if (got !== wanted) problems.push(`${want.note}: ${got}, expected ${wanted}`)
  }
  const extra = listed.length - model.size

  // Balances and payee totals, exactly, from the operations.
  const balances = { A: initial.A, B: initial.B }
  const perPayee = new Map<string, { count: number; spent: bigint }>()
  for (const t of model.values()) {
    balances[t.account] -= t.cents
    if (t.transfer) balances.B += t.cents // same currency: the destination is credited the amount
    if (t.payee) {
      const p = perPayee.get(t.payee) ?? { count: 0, spent: 0n }
      p.count++
      if (!t.transfer && t.cents > 0n) p.spent += t.cents
      perPayee.set(t.payee, p)
    }
  }
  for (const name of ['A', 'B'] as const) {
    const res = await send('GET', `/v1/accounts/${accountIds[name]}`)
    const got = units(JSON.parse(res.text).data.balance) / UNITS_PER_CENT
    if (got !== balances[name]) problems.push(`balance of ${name}: ${centsText(got)}, the operations imply ${centsText(balances[name])}`)
  }
  for (const name of PAYEES) {
    const p = payees.find((x) => x.name === name)
    const want = perPayee.get(name) ?? { count: 0, spent: 0n }
    const got = p ? { count: p.transactionCount, spent: units(p.totalSpent) / UNITS_PER_CENT } : null
    if (!got || got.count !== want.count || got.spent !== want.spent) {
      problems.push(
        `payee ${name}: ${got ? `${got.count} / ${centsText(got.spent)}` : 'missing'}, the operations imply ${want.count} / ${centsText(want.spent)}`,
      )
    }
  }
  if (payees.length !== PAYEES.length) problems.push(`${payees.length} payees, expected ${PAYEES.length}: ${payees.map((p) => p.name).join(', ')}`)
  fileConsistent('at the end')

  console.log(
    `crash balances: ${ops.length} operations, ${answeredBeforeKill} answered before the first kill, ${unknownFate} attempts cut off (${appliedUnseen} of them had been applied), ` +
      `${dropped} control records dropped, ${replays} replays checked; ${duplicates.length} duplicates, ${extra} extra rows, ${problems.length} problems`,
  )
  for (const line of problems.slice(0, 30)) console.log(`  ${line}`)
  server.proc.kill('SIGTERM')
  await server.proc.exited

  expect(duplicates).toEqual([])
  expect(extra).toBe(0)
  expect(listed.length).toBe(model.size)
  expect({ count: problems.length, first: problems.slice(0, 15) }).toEqual({ count: 0, first: [] })
  expect(replays).toBeGreaterThanOrEqual(ops.length - 15) // at least the final full round (DELETEs are not replayed)
}, 60_000)
