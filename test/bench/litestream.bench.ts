import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { litestreamBinary, litestreamConfig } from '../../src/ops/litestream.ts'
import type { Benchmark } from './benchmark.ts'
import { admin, Cleanup, tempDir } from './support.ts'

/**
 * What Litestream (v0.3.13, as a cluster node runs it, CONTRACT §31) costs for idle owners: N
 * copies of a fresh owner's file (made by `pfin owner create`, copied while nothing has it open),
 * replicated to a local folder at a given interval (its monitor-interval and sync-interval, as a
 * node sets both from CLUSTER_REPLICA_INTERVAL). After Litestream has taken its first
 * snapshot of every file (and LITESTREAM_SETTLE seconds more, default 5), its CPU (user + system ticks
 * from /proc over LITESTREAM_WINDOW seconds, default 15) and RSS are read, beside the machine's
 * load average. N from LITESTREAM_OWNERS (default 100,300,1000); intervals from
 * LITESTREAM_INTERVALS (default 1s,10s). No target: the figures size a node (docs/operations.md).
 */

const OWNERS = (process.env.LITESTREAM_OWNERS ?? '100,300,1000').split(',').map(Number)
const INTERVALS = (process.env.LITESTREAM_INTERVALS ?? '1s,10s').split(',')
const SETTLE_S = Number(process.env.LITESTREAM_SETTLE ?? 5)
const WINDOW_S = Number(process.env.LITESTREAM_WINDOW ?? 15)
const TICKS_PER_S = 100

function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? 0) / 1024
}

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

export const benchmark: Benchmark = {
  name: 'litestream',
  description: `Litestream 0.3.13 replicating ${OWNERS.join('/')} idle owners at intervals ${INTERVALS.join('/')}: CPU and RSS`,
  async run() {
    let binary: string
    try {
      binary = litestreamBinary()
      if (!existsSync(binary)) throw new Error(`${binary} is missing`)
    } catch (error) {
      console.log(`skipped: no Litestream binary (${(error as Error).message})`)
      return { summary: 'skipped: no Litestream binary' }
    }
    const cleanup = new Cleanup()
    const rows: string[] = []
    try {
      const root = cleanup.dir(tempDir('pfin-bench-litestream-'))
      const made = await admin(join(root, 'template'), 'owner', 'create', '--name', 'Idle', '--currency', 'EUR')
      const template = join(root, 'template', 'tenants', `${made.id}.db`)
      for (const interval of INTERVALS) {
        for (const owners of OWNERS) {
          const dir = join(root, `${owners}-${interval}`)
          mkdirSync(join(dir, 'tenants'), { recursive: true })
          const databases = Array.from({ length: owners }, (_, i) => {
            const path = join(dir, 'tenants', `owner-${i}.db`)
            copyFileSync(template, path)
            return { path, url: `file://${join(dir, 'replica', `owner-${i}`)}` }
          })
          const config = join(dir, 'litestream.yml')
          writeFileSync(config, litestreamConfig(databases, interval))
          const child = Bun.spawn([binary, 'replicate', '-config', config], { stdout: 'ignore', stderr: 'ignore' })
          cleanup.add(async () => {
            child.kill('SIGKILL')
            await child.exited
          })
          try {
            // Settled: every file has its first snapshot in the replica, then a few more seconds.
            const deadline = Date.now() + 300_000
            const hasSnapshot = (url: string) => {
              const dir = new URL(url).pathname
              return existsSync(dir) && new Bun.Glob('generations/*/snapshots/*').scanSync(dir).next().done === false
            }
            const snapshotted = () => databases.filter(({ url }) => hasSnapshot(url)).length
            while (snapshotted() < owners && Date.now() < deadline && child.exitCode === null) await Bun.sleep(1000)
            await Bun.sleep(SETTLE_S * 1000)
            if (child.exitCode !== null) throw new Error(`litestream exited ${child.exitCode} with ${owners} databases`)
            const before = cpuTicks(child.pid)
            const started = performance.now()
            await Bun.sleep(WINDOW_S * 1000)
            const cores = (cpuTicks(child.pid) - before) / TICKS_PER_S / ((performance.now() - started) / 1000)
            const line = `${String(owners).padStart(5)} idle owners, interval ${interval.padEnd(3)}: ${cores.toFixed(3)} core, RSS ${rssMiB(child.pid).toFixed(0)} MiB (load average ${loadAverage()})`
            console.log(line)
            rows.push(`${owners}@${interval} ${cores.toFixed(2)} core ${rssMiB(child.pid).toFixed(0)} MiB`)
          } finally {
            child.kill('SIGTERM')
            await Promise.race([child.exited, Bun.sleep(10_000)])
            if (child.exitCode === null) child.kill('SIGKILL')
            await child.exited
          }
        }
      }
      return { summary: rows.join('; ') }
    } finally {
      await cleanup.run()
    }
  },
}
