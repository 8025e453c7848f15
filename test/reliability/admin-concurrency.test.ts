import { afterAll, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import {
  type AdminResult,
  admin,
  adminJson,
  call,
  cleanup,
  integrity,
  processEnv,
  type ServerProcess,
  startServer,
  tempDir,
  withDb,
} from '../support/processes.ts'

/**
 * CONTRACT §2: admin commands run beside the server and beside each other. Each one
 * that reports success has committed (it waits on a busy database rather than failing), none
 * disturbs the server, and a revocation or expiry is honoured by the running server within one
 * second. Every process here is real: `bun src/main.ts serve` under API load, and every kind of
 * admin command (`owner create|list|export`, `key create|list|revoke`) in parallel loops.
 *
 * Failures are collected rather than thrown at the first one, so a failing run reports how
 * often each thing went wrong (server deaths, failed commands, lost results).
 */

afterAll(cleanup)

const LOOPS = 4
/** Rounds of seven commands per loop: beside the server, and without one (the cheaper half). */
const ROUNDS = 3
const ROUNDS_ALONE = 3
/** Revocation and expiry must be honoured within this long (CONTRACT §2). */
const HONOUR_MS = 1000

type Json = Record<string, unknown>

interface Ledger {
  problems: string[]
  commands: AdminResult[]
  owners: string[]
  /** Every key a command acknowledged, with its owner and plaintext. */
  keys: { id: string; ownerId: string; key: string }[]
  revoked: Set<string>
  /** Keys a `key revoke` was run for, whatever its outcome (a failed command may still have committed). */
  revokeAttempted: Set<string>
  exports: { path: string; ownerId: string }[]
}

function newLedger(): Ledger {
  return { problems: [], commands: [], owners: [], keys: [], revoked: new Set(), revokeAttempted: new Set(), exports: [] }
}

/** Runs one admin command, records it, and returns its JSON (null after recording the failure). */
async function run(env: Record<string, string>, ledger: Ledger, ...args: string[]): Promise<Json | null> {
  const result = await admin(env, ...args)
  ledger.commands.push(result)
  if (!result.json) {
    const lines = result.stderr.split('\n').filter((l) => l.trim() !== '')
    const line = lines.find((l) => /panic|error|pfin:/i.test(l)) ?? lines[0] ?? ''
    ledger.problems.push(`\`${args.slice(0, 2).join(' ')}\` exited ${result.code}${result.code > 128 ? ` (signal ${result.code - 128})` : ''}: ${line.trim()}`)
    return null
  }
  return result.json
}

interface Api {
  /** The running server's URL, or null when the suite runs without a server. */
  url(): string | null
}

/** Polls GET /v1/me until the key is refused; a 200 once `deadline` passed is a problem, and so is any 200 after the first 401. */
async function expectRefusedBy(api: Api, ledger: Ledger, what: string, key: string, since: number, deadline: number): Promise<number | null> {
  for (;;) {
    const sentAt = Date.now()
    const url = api.url()
    if (!url) return null
    const res = await call(url, 'GET', '/v1/me', { key })
    if (res.status === 401) {
      // refused now: it must stay refused
      for (let i = 0; i < 5; i++) {
        await Bun.sleep(20)
        const again = await call(url, 'GET', '/v1/me', { key })
        if (again.status !== 401) ledger.problems.push(`${what}: ${again.status} after it had been refused`)
      }
      return sentAt - since
    }
    if (res.status !== 200) {
      ledger.problems.push(`${what}: unexpected ${res.status} ${res.text.slice(0, 200)}`)
      return null
    }
    if (sentAt > deadline) {
      ledger.problems.push(`${what}: still 200 ${sentAt - since} ms after the deadline's start (allowed ${deadline - since} ms)`)
      return null
    }
    await Bun.sleep(10)
  }
}

/**
 * One admin loop: `rounds` rounds of seven commands, one of every kind. With a server, every
 * acknowledged key is tried against it at once, and every revocation must be honoured within 1 s.
 */
async function adminLoop(
  env: Record<string, string>,
  ledger: Ledger,
  api: Api,
  loop: number,
  rounds: number,
  loadOwner: string,
  outDir: string,
  revokeLatencies: number[],
): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const tag = `loop ${loop} round ${round}`
    const created = await run(env, ledger, 'owner', 'create', '--name', `Admin ${loop}-${round}`, '--country', 'PT', '--currency', 'EUR')
    const ownerId = typeof created?.id === 'string' ? created.id : null
    if (ownerId) ledger.owners.push(ownerId)

    // a key for the new owner (revoked below) and one for an owner under API load (kept)
    let doomed: { id: string; key: string } | null = null
    if (ownerId) {
      const made = await run(env, ledger, 'key', 'create', '--owner', ownerId, '--name', `doomed ${tag}`)
      if (made) {
        doomed = { id: made.id as string, key: made.key as string }
        ledger.keys.push({ ...doomed, ownerId })
      }
    }
    const kept = await run(env, ledger, 'key', 'create', '--owner', loadOwner, '--scopes', 'me:read,transactions:read', '--name', `kept ${tag}`)
    if (kept) ledger.keys.push({ id: kept.id as string, key: kept.key as string, ownerId: loadOwner })

    const url = api.url()
    if (url) {
      for (const k of [doomed, kept]) {
        if (!k) continue
        const res = await call(url, 'GET', '/v1/me', { key: k.key as string })
        if (res.status !== 200) ledger.problems.push(`${tag}: a just-created key got ${res.status} ${res.text.slice(0, 200)}`)
      }
    }

    if (ownerId) {
      const listed = await run(env, ledger, 'key', 'list', '--owner', ownerId)
      const ids = ((listed?.keys as { id: string }[] | undefined) ?? []).map((k) => k.id)
      if (listed && doomed && !ids.includes(doomed.id)) ledger.problems.push(`${tag}: key list right after key create misses ${doomed.id}`)
    }
    const owners = await run(env, ledger, 'owner', 'list')
    if (owners && ownerId && !((owners.owners as { id: string }[]) ?? []).some((o) => o.id === ownerId)) {
      ledger.problems.push(`${tag}: owner list right after owner create misses ${ownerId}`)
    }

    // export alternately the owner under write load and the new one
    const exportOwner = round % 2 === 0 || !ownerId ? loadOwner : ownerId
    const out = join(outDir, `export-${loop}-${round}.db`)
    if (await run(env, ledger, 'owner', 'export', '--owner', exportOwner, '--out', out)) ledger.exports.push({ path: out, ownerId: exportOwner })

    if (doomed) {
      ledger.revokeAttempted.add(doomed.id)
      const revoke = await run(env, ledger, 'key', 'revoke', doomed.id)
      if (revoke) {
        if (revoke.revoked !== true || revoke.id !== doomed.id) ledger.problems.push(`${tag}: key revoke printed ${JSON.stringify(revoke)}`)
        ledger.revoked.add(doomed.id)
        const exitedAt = ledger.commands[ledger.commands.length - 1]?.exitedAt ?? Date.now()
        const latency = await expectRefusedBy(api, ledger, `${tag}: revoked key ${doomed.id}`, doomed.key, exitedAt, exitedAt + HONOUR_MS)
        if (latency !== null) revokeLatencies.push(latency)
      }
    }
  }
}

/** Every exported file is a sound SQLite database holding that owner's profile. */
function checkExports(ledger: Ledger): void {
  for (const { path, ownerId } of ledger.exports) {
    if (!existsSync(path)) {
      ledger.problems.push(`export ${path} acknowledged but missing`)
      continue
    }
    const check = integrity(path)
    if (check !== 'ok') {
      ledger.problems.push(`export ${path}: integrity_check ${check}`)
      continue
    }
    const profile = withDb(path, (db) => db.query('SELECT id FROM profile').all() as { id: string }[], { readonly: true })
    if (profile.length !== 1 || profile[0]?.id !== ownerId) ledger.problems.push(`export ${path}: profile ${JSON.stringify(profile)}, expected ${ownerId}`)
  }
}

function summary(ledger: Ledger): string {
  const failed = ledger.commands.filter((c) => c.code !== 0).length
  return `${ledger.commands.length} admin commands (${failed} failed), ${ledger.owners.length} owners, ${ledger.keys.length} keys, ${ledger.revoked.size} revocations, ${ledger.exports.length} exports acknowledged`
}

test('admin commands of every kind in parallel beside a loaded server: the server never dies, every acknowledged result holds, revocation and expiry are honoured within 1 s', async () => {
  const dataDir = tempDir('pfin-admin-')
  const outDir = tempDir('pfin-admin-out-')
  const env = processEnv(dataDir)
  const ledger = newLedger()

  // Before the server: two owners under API load, two keys each (sequentially, so the setup does not depend on what is tested)
  const loadOwners: string[] = []
  const loadKeys: { ownerId: string; key: string }[] = []
  for (let i = 0; i < 2; i++) {
    const ownerId = (await adminJson(env, 'owner', 'create', '--name', `Load ${i}`, '--currency', 'EUR')).id as string
    loadOwners.push(ownerId)
    for (let k = 0; k < 2; k++) loadKeys.push({ ownerId, key: (await adminJson(env, 'key', 'create', '--owner', ownerId)).key as string })
  }

  let server: ServerProcess = await startServer(env)
  let finished = false
  const deaths: string[] = []
  let restarting: Promise<void> | null = null
  const watch = (s: ServerProcess) => {
    void s.proc.exited.then(async () => {
      if (finished) return
      deaths.push(
        `server died (exit ${s.proc.exitCode}, signal ${s.proc.signalCode}) after ${ledger.commands.length} admin commands: ${
          s
            .stderr()
            .split('\n')
            .find((l) => /panic|error/i.test(l))
            ?.trim() ?? s.stderr().trim().slice(-200)
        }`,
      )
      // restart on the same DATA_DIR so the run goes on and counts every death
      restarting = startServer(env).then((next) => {
        server = next
        watch(next)
        restarting = null
      })
    })
  }
  watch(server)
  const api: Api = { url: () => server.url }

  const accounts = new Map<string, string>()
  for (const { ownerId, key } of loadKeys) {
    if (accounts.has(ownerId)) continue
    const res = await call(server.url, 'POST', '/v1/accounts', {
      key,
      idempotencyKey: crypto.randomUUID(),
      body: '{"name":"Load","type":"bank","balance":1000,"currency":"EUR"}',
    })
    expect(res.status).toBe(201)
    accounts.set(ownerId, JSON.parse(res.text).data.id)
  }

  // API load: one loop per key, reads and writes, until the admin loops are done
  const statuses = new Map<number, number>()
  const apiFailures: string[] = []
  let loadRunning = true
  const loadLoop = async (ownerId: string, key: string) => {
    let n = 0
    while (loadRunning) {
      const url = server.url
      const kind = n++ % 4
      const res =
        kind === 0
          ? await call(url, 'GET', '/v1/me', { key })
          : kind === 1
            ? await call(url, 'GET', '/v1/transactions?limit=20', { key })
            : kind === 2
              ? await call(url, 'POST', '/v1/transactions', {
                  key,
                  idempotencyKey: crypto.randomUUID(),
                  body: `{"accountId":"${accounts.get(ownerId)}","amount":1.25,"date":"2026-05-01","payeeName":"Load payee ${n % 5}"}`,
                })
              : await call(url, 'GET', '/v1/payees?limit=10', { key })
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
      if (res.status === 0 || res.status >= 500) {
        if (apiFailures.length < 10) apiFailures.push(`${res.status} ${res.text.slice(0, 200)}`)
        if (res.status === 0) await (restarting ?? Bun.sleep(50))
      } else if (res.status !== 200 && res.status !== 201) {
        ledger.problems.push(`API load: unexpected ${res.status} ${res.text.slice(0, 200)}`)
      }
    }
  }
  const load = loadKeys.map(({ ownerId, key }) => loadLoop(ownerId, key))

  // Expiry: a key made with --expires-in 2s works, then is refused within 1 s of expiring.
  const expiry = (async () => {
    const made = await run(env, ledger, 'key', 'create', '--owner', loadOwners[0] as string, '--expires-in', '2s', '--name', 'short-lived')
    if (!made) return null
    const createdBy = ledger.commands.find((c) => c.json?.id === made.id) as AdminResult
    const key = made.key as string
    ledger.keys.push({ id: made.id as string, key, ownerId: loadOwners[0] as string })
    const seen: { sentAt: number; doneAt: number; status: number }[] = []
    for (;;) {
      const sentAt = Date.now()
      const res = await call(server.url, 'GET', '/v1/me', { key })
      seen.push({ sentAt, doneAt: Date.now(), status: res.status })
      if (res.status === 401 || res.status === 0 || sentAt > createdBy.startedAt + 5000) break
      await Bun.sleep(20)
    }
    for (let i = 0; i < 5; i++) {
      await Bun.sleep(40)
      const sentAt = Date.now()
      // The answer first: an object literal reads Date.now() for doneAt before awaiting the status after it.
      const status = (await call(server.url, 'GET', '/v1/me', { key })).status
      seen.push({ sentAt, doneAt: Date.now(), status })
    }
    return { id: made.id as string, createdBy, seen }
  })()

  const revokeLatencies: number[] = []
  const startedAt = Date.now()
  await Promise.all(
    Array.from({ length: LOOPS }, (_, loop) =>
      adminLoop(env, ledger, api, loop, ROUNDS, loadOwners[loop % loadOwners.length] as string, outDir, revokeLatencies),
    ),
  )
  const expired = await expiry
  const adminMs = Date.now() - startedAt
  loadRunning = false
  await Promise.all(load)
  if (restarting) await restarting

  // Afterwards, every acknowledged owner and key is there, and the kept keys work against the server.
  const owners = await run(env, ledger, 'owner', 'list')
  const listedOwners = new Set(((owners?.owners as { id: string }[] | undefined) ?? []).map((o) => o.id))
  for (const id of [...loadOwners, ...ledger.owners])
    if (owners && !listedOwners.has(id)) ledger.problems.push(`owner ${id} acknowledged but not in owner list`)
  const listedKeys = new Map<string, { id: string; revokedAt: number | null; expiresAt: number | null }>()
  const byOwner = [...new Set(ledger.keys.map((k) => k.ownerId))]
  for (let i = 0; i < byOwner.length; i += LOOPS) {
    await Promise.all(
      byOwner.slice(i, i + LOOPS).map(async (ownerId) => {
        const listed = await run(env, ledger, 'key', 'list', '--owner', ownerId)
        for (const k of (listed?.keys as { id: string; revokedAt: number | null; expiresAt: number | null }[] | undefined) ?? []) listedKeys.set(k.id, k)
      }),
    )
  }
  for (const k of ledger.keys) {
    const listed = listedKeys.get(k.id)
    if (!listed) {
      ledger.problems.push(`key ${k.id} acknowledged but not in key list`)
      continue
    }
    const revokedAt = listed.revokedAt
    if (ledger.revoked.has(k.id) && revokedAt === null) ledger.problems.push(`key ${k.id}: revocation acknowledged, but key list shows it active`)
    if (!ledger.revokeAttempted.has(k.id) && revokedAt !== null) ledger.problems.push(`key ${k.id}: never revoked, but key list shows revokedAt ${revokedAt}`)
    const res = await call(server.url, 'GET', '/v1/me', { key: k.key })
    const expected = revokedAt !== null || listed.expiresAt !== null ? 401 : 200
    if (res.status !== expected)
      ledger.problems.push(
        `key ${k.id} (${ledger.revoked.has(k.id) ? 'revoked' : listed.expiresAt ? 'expired' : 'kept'}) got ${res.status}, expected ${expected}`,
      )
  }
  checkExports(ledger)

  // Expiry within 1 s, judged against the exact expiresAt from key list.
  if (expired) {
    const expiresAt = listedKeys.get(expired.id)?.expiresAt ?? expired.createdBy.exitedAt + 2000
    const first401 = expired.seen.find((s) => s.status === 401)
    if (!expired.seen.some((s) => s.status === 200 && s.doneAt < expiresAt)) ledger.problems.push('expiring key: never worked before it expired')
    for (const s of expired.seen) {
      if (s.status === 401 && s.doneAt < expiresAt) ledger.problems.push(`expiring key: refused ${expiresAt - s.doneAt} ms before it expired`)
      if (s.status === 200 && s.sentAt > expiresAt + HONOUR_MS) ledger.problems.push(`expiring key: still 200 ${s.sentAt - expiresAt} ms after it expired`)
      if (s.status !== 200 && s.status !== 401) ledger.problems.push(`expiring key: got ${s.status}`)
    }
    if (!first401) ledger.problems.push('expiring key: never refused')
    else if (first401.sentAt > expiresAt + HONOUR_MS) ledger.problems.push(`expiring key: first refused ${first401.sentAt - expiresAt} ms after it expired`)
  }

  // The server is the one started at the beginning, alive and answering.
  const health = await call(server.url, 'GET', '/healthz')
  finished = true
  const alive = server.proc.exitCode === null && server.proc.signalCode === null
  const fiveHundreds = [...statuses].filter(([s]) => s >= 500 || s === 0).reduce((n, [, c]) => n + c, 0)
  const requests = [...statuses.values()].reduce((a, b) => a + b, 0)
  const kinds = new Set(ledger.commands.map((c) => c.args.slice(0, 2).join(' ')))
  console.log(
    `admin beside server: ${summary(ledger)} in ${adminMs} ms; ${deaths.length} server deaths; ${requests} API requests (${fiveHundreds} 5xx or network errors); ` +
      `revocation honoured after ${revokeLatencies.length ? `${Math.min(...revokeLatencies)}–${Math.max(...revokeLatencies)} ms` : '-'}; ${ledger.problems.length} problems`,
  )
  for (const line of [...deaths, ...apiFailures, ...ledger.problems].slice(0, 40)) console.log(`  ${line}`)

  server.proc.kill('SIGTERM')
  await server.proc.exited

  expect(kinds).toEqual(new Set(['owner create', 'owner list', 'owner export', 'key create', 'key list', 'key revoke']))
  expect(ledger.commands.length).toBeGreaterThanOrEqual(60)
  expect(deaths).toEqual([])
  expect(alive).toBe(true)
  expect(health.status).toBe(200)
  expect(apiFailures).toEqual([])
  expect({ count: ledger.problems.length, first: ledger.problems.slice(0, 15) }).toEqual({ count: 0, first: [] })
  expect(ledger.revoked.size).toBe(LOOPS * ROUNDS)
}, 120_000)

test('admin commands of every kind in parallel without a server: every one succeeds and every acknowledged result is in control.db', async () => {
  const dataDir = tempDir('pfin-admin-')
  const outDir = tempDir('pfin-admin-out-')
  const env = processEnv(dataDir)
  const ledger = newLedger()
  const loadOwner = (await adminJson(env, 'owner', 'create', '--name', 'Existing')).id as string

  const startedAt = Date.now()
  await Promise.all(Array.from({ length: LOOPS }, (_, loop) => adminLoop(env, ledger, { url: () => null }, loop, ROUNDS_ALONE, loadOwner, outDir, [])))
  const adminMs = Date.now() - startedAt

  // Straight from the files, once every command has exited.
  withDb(
    join(dataDir, 'control.db'),
    (db) => {
      const owners = new Set((db.query('SELECT id FROM owners').all() as { id: string }[]).map((r) => r.id))
      for (const id of ledger.owners) {
        if (!owners.has(id)) ledger.problems.push(`owner ${id} acknowledged but not in control.db`)
        const tenant = join(dataDir, 'tenants', `${id}.db`)
        if (!existsSync(tenant)) ledger.problems.push(`owner ${id} acknowledged but has no database file`)
        else if (integrity(tenant) !== 'ok') ledger.problems.push(`owner ${id}: tenant file integrity_check ${integrity(tenant)}`)
      }
      const keys = new Map(
        (db.query('SELECT id, owner_id, revoked_at FROM api_keys').all() as { id: string; owner_id: string; revoked_at: number | null }[]).map((r) => [
          r.id,
          r,
        ]),
      )
      for (const k of ledger.keys) {
        const row = keys.get(k.id)
        if (!row) ledger.problems.push(`key ${k.id} acknowledged but not in control.db`)
        else if (row.owner_id !== k.ownerId) ledger.problems.push(`key ${k.id}: owner ${row.owner_id}, expected ${k.ownerId}`)
        else if (ledger.revoked.has(k.id) && row.revoked_at === null) ledger.problems.push(`key ${k.id}: revocation acknowledged, but revoked_at is null`)
        else if (!ledger.revokeAttempted.has(k.id) && row.revoked_at !== null)
          ledger.problems.push(`key ${k.id}: never revoked, but revoked_at ${row.revoked_at}`)
      }
    },
    { readonly: true },
  )
  checkExports(ledger)

  console.log(`admin without server: ${summary(ledger)} in ${adminMs} ms; ${ledger.problems.length} problems`)
  for (const line of ledger.problems.slice(0, 40)) console.log(`  ${line}`)

  expect({ count: ledger.problems.length, first: ledger.problems.slice(0, 15) }).toEqual({ count: 0, first: [] })
  expect(ledger.commands.length).toBe(LOOPS * ROUNDS_ALONE * 7)
  expect(ledger.owners.length).toBe(LOOPS * ROUNDS_ALONE)
  expect(ledger.revoked.size).toBe(LOOPS * ROUNDS_ALONE)
}, 90_000)
