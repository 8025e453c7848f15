import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { selfCommand } from '../platform/program.ts'
import type { Config } from '../config.ts'
import { MANIFEST } from './backup.ts'

/**
 * Scheduled backups (CONTRACT §18): with BACKUP_DIR set, the server takes a backup every
 * BACKUP_INTERVAL_HOURS into BACKUP_DIR/pfin-<UTC time>/ and keeps the newest BACKUP_KEEP.
 * Each backup runs as `pfin backup` in a child process: copying large files must not hold the
 * server's event loop, and the child is the same code an operator runs by hand.
 */

const PREFIX = 'pfin-'

/** The longest delay `setTimeout` keeps (2^31 − 1 ms); past it the timer fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1

const stamp = (at: Date) =>
  at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')

/** Complete backups in `dir`, oldest first (names sort by time). */
function backups(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((name) => name.startsWith(PREFIX) && existsSync(join(dir, name, MANIFEST)))
    .sort()
}

function prune(dir: string, keep: number, log: (message: string) => void): void {
  const all = backups(dir)
  for (const name of all.slice(0, Math.max(0, all.length - keep))) {
    rmSync(join(dir, name), { recursive: true, force: true })
    log(`backup ${name} removed (BACKUP_KEEP=${keep})`)
  }
  // Left by a backup that was cut off (a stop, a crash): never mistaken for a backup, but in the way.
  for (const name of readdirSync(dir))
    if (name.startsWith(`.${PREFIX}`) && name.includes('.partial-')) rmSync(join(dir, name), { recursive: true, force: true })
}

export function scheduleBackups(config: Config, log: (message: string) => void): () => void {
  const dir = config.backupDir
  if (!dir) return () => {}
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const intervalMs = config.backupIntervalHours * 3_600_000
  let running: { kill(signal?: NodeJS.Signals): void } | undefined
  let timer: ReturnType<typeof setTimeout> | undefined

  const take = async () => {
    const out = join(dir, `${PREFIX}${stamp(new Date())}`)
    const child = Bun.spawn([...selfCommand(), 'backup', '--out', out, '--json'], {
      env: { ...process.env, DATA_DIR: config.dataDir },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    running = child
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
    running = undefined
    if (code === 0) log(`backup written: ${stdout.trim()}`)
    else log(`scheduled backup failed (exit ${code}): ${stderr.trim()}`)
    try {
      prune(dir, config.backupKeep, log)
    } catch (error) {
      log(`pruning old backups failed: ${String(error)}`)
    }
  }
  const next = () => {
    const newest = backups(dir).at(-1)
    const age = newest ? Date.now() - statSync(join(dir, newest, MANIFEST)).mtimeMs : Number.POSITIVE_INFINITY
    // Due now when the newest backup is older than the interval (a restart does not skip one).
    const wait = Math.max(1000, intervalMs - age)
    // A timer holds at most ~24.8 days (a longer delay fires at once): a longer wait is taken in steps.
    timer = wait > MAX_TIMER_MS ? setTimeout(next, MAX_TIMER_MS) : setTimeout(() => void take().finally(next), wait)
    timer.unref()
  }
  next()
  return () => {
    if (timer) clearTimeout(timer)
    running?.kill('SIGTERM')
  }
}
