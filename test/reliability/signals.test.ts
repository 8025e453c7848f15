import { afterAll, expect, test } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { adminJson, call, childPids, cleanup, type GroupServer, groupGone, processEnv, startGroupServer, tempDir, withDb } from '../support/processes.ts'

/**
 * CONTRACT §14: SIGTERM and SIGINT, once or repeatedly, stop the server gracefully:
 * in-flight requests finish, the rate-limit counters and lastUsedAt are written, the databases
 * close, and the exit is clean. The server runs as an operator runs it: `bun run start` (so the
 * `bun run` wrapper forwards signals to the real server) as the leader of its own process group,
 * the way systemd's KillMode=control-group signals every process of the unit.
 *
 * Each trial uses a fresh key, sends a burst of requests and signals the server while the burst's
 * last requests are in flight. Once every process of the group has gone, control.db must hold,
 * for bucket `key:<keyId>`, exactly as many requests in the minute and the day as were answered,
 * and the key's last_used_at must be set to a time within the burst.
 */

afterAll(cleanup)

const dataDir = tempDir('pfin-signals-')
const env = processEnv(dataDir)
const TRIALS = 4
const BURST = 160
const CONCURRENCY = 8

type Delivery = (server: GroupServer) => Promise<void>
const jitter = () => Bun.sleep(1 + Math.random() * 2)
/** The real server: the one child of the `bun run` wrapper. */
function serverPid(server: GroupServer): number {
  const pids = childPids(server.pgid)
  if (pids.length !== 1) throw new Error(`expected one child of bun run, found ${JSON.stringify(pids)}`)
  return pids[0] as number
}

const scenarios: [string, Delivery][] = [
  ['SIGTERM to the wrapper only (forwarded once)', async (s) => void process.kill(s.pgid, 'SIGTERM')],
  ['SIGTERM to the whole process group (the server gets it twice: directly and forwarded)', async (s) => void process.kill(-s.pgid, 'SIGTERM')],
  [
    'SIGTERM twice, 1–3 ms apart, to the server process',
    async (s) => {
      const pid = serverPid(s)
      process.kill(pid, 'SIGTERM')
      await jitter()
      process.kill(pid, 'SIGTERM')
    },
  ],
  [
    'SIGINT then SIGTERM 1–3 ms later, each to the whole process group',
    async (s) => {
      process.kill(-s.pgid, 'SIGINT')
      await jitter()
      process.kill(-s.pgid, 'SIGTERM')
    },
  ],
]

let owner = ''
const keys: { id: string; key: string }[] = []
async function freshKey(): Promise<{ id: string; key: string }> {
  if (!owner) owner = (await adminJson(env, 'owner', 'create', '--name', 'Signals')).id as string
  const made = await adminJson(env, 'key', 'create', '--owner', owner, '--name', `signals ${keys.length}`)
  const key = { id: made.id as string, key: made.key as string }
  keys.push(key)
  return key
}

/** Waits until at least 3 s remain in the current UTC minute, so one burst sits in one minute (and one day). */
async function awayFromMinuteEnd(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000)
  if (left < 3000) await Bun.sleep(left + 20)
}

interface TrialResult {
  problems: string[]
  answered: number
  refused: number
  exit: { code: number | null; signal: NodeJS.Signals | null }
}

async function trial(deliver: Delivery): Promise<TrialResult> {
  const problems: string[] = []
  const key = await freshKey()
  await awayFromMinuteEnd()
  const server = await startGroupServer(env)
  const burstStart = Date.now()

  // The burst: CONCURRENCY loops of reads with the key; the signal goes out while they still run.
  let answered = 0
  let refused = 0
  let sent = 0
  let signalled: Promise<void> | null = null
  const loop = async (n: number) => {
    for (;;) {
      if (sent >= BURST * 5) return
      sent++
      const res = await call(server.url, 'GET', n % 2 ? '/v1/me' : '/v1/accounts?limit=5', { key: key.key, timeoutMs: 10_000 })
      if (res.status === 0) {
        refused++ // the server stopped listening: no further request of this loop can be counted
        return
      }
      answered++
      if (res.status !== 200) problems.push(`request answered ${res.status} ${res.text.slice(0, 200)}`)
      if (answered >= BURST && !signalled) signalled = deliver(server)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, n) => loop(n)))
  await signalled
  const exit = await Promise.race([server.exit, Bun.sleep(15_000).then(() => null)])
  const gone = await groupGone(server.pgid, 5000)
  if (!exit) problems.push('bun run start did not exit within 15 s of the signal')
  if (!gone) problems.push('a process of the group outlived the wrapper by 5 s')
  if (exit && (exit.code !== 0 || exit.signal !== null))
    problems.push(`exit ${exit.code === null ? `by signal ${exit.signal}` : `code ${exit.code}`}, expected code 0`)
  const died = /terminated by signal \w+/.exec(server.stderr())
  if (died) problems.push(`bun run reports the server "${died[0]}"`)
  if (sent < BURST * 5 && refused === 0) problems.push('no request was refused after the signal: the burst did not reach the stop')

  // Databases closed: the last connection to close checkpoints and removes each WAL file.
  const wals = [
    join(dataDir, 'control.db-wal'),
    ...readdirSync(join(dataDir, 'tenants'))
      .filter((f) => f.endsWith('-wal'))
      .map((f) => join(dataDir, 'tenants', f)),
  ].filter(existsSync)
  if (wals.length) problems.push(`WAL files left behind (a database was not closed): ${wals.map((w) => w.slice(dataDir.length + 1)).join(', ')}`)

  withDb(join(dataDir, 'control.db'), (db) => {
    const row = db.query('SELECT minute_window, minute_count, day_window, day_count FROM rate_limit_counters WHERE bucket = ?').get(`key:${key.id}`) as {
      minute_window: number
      minute_count: number
      day_window: number
      day_count: number
    } | null
    const minute = Math.floor(burstStart / 60_000)
    const day = Math.floor(burstStart / 86_400_000)
    if (!row) problems.push(`counters lost: no row for key:${key.id} (${answered} requests answered)`)
    else {
      if (row.minute_window !== minute || row.minute_count !== answered)
        problems.push(`minute counter ${row.minute_count} in window ${row.minute_window}, expected ${answered} in ${minute}`)
      if (row.day_window !== day || row.day_count !== answered)
        problems.push(`day counter ${row.day_count} in window ${row.day_window}, expected ${answered} in ${day}`)
    }
    const used = db.query('SELECT last_used_at FROM api_keys WHERE id = ?').get(key.id) as { last_used_at: number | null } | null
    if (!used || used.last_used_at === null) problems.push('lastUsedAt lost: still null')
    else if (used.last_used_at < burstStart || used.last_used_at > Date.now())
      problems.push(`lastUsedAt ${used.last_used_at} outside the burst (${burstStart}…)`)
  })
  return { problems, answered, refused, exit: exit ?? { code: null, signal: null } }
}

for (const [name, deliver] of scenarios) {
  test(`${name}: every trial exits cleanly with counters and lastUsedAt written`, async () => {
    const results: TrialResult[] = []
    for (let i = 0; i < TRIALS; i++) results.push(await trial(deliver))
    const failed = results.filter((r) => r.problems.length > 0)
    console.log(
      `${name}: ${failed.length}/${TRIALS} trials lost something; ` +
        results
          .map(
            (r) =>
              `[${r.answered} answered, ${r.refused} refused, exit ${r.exit.code ?? r.exit.signal}${r.problems.length ? `: ${r.problems.join('; ')}` : ''}]`,
          )
          .join(' '),
    )
    expect(results.map((r) => r.problems)).toEqual(results.map(() => []))
  }, 40_000)
}
