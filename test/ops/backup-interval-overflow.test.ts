import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { adminJson, cleanup, processEnv, startServer, tempDir } from '../support/processes.ts'

/**
 * BACKUP_INTERVAL_HOURS of 597 or more (about 25 days; e.g. 720 for "monthly") takes one backup
 * per interval, not one after another.
 *
 * The schedule keeps every timer within what `setTimeout` holds. Were the next backup armed with one
 * `setTimeout(…, hours × 3,600,000 ms)`, a delay above 2^31−1 ms does not fit the timer:
 * Bun sets it to 1 ms ("TimeoutOverflowWarning … Timeout duration was set to 1"). So instead of
 * once a month the server would take a backup, then another at once, without end: a child process
 * copying every database back to back, BACKUP_KEEP folders churned, the disk and the CPU busy
 * for as long as the server runs. BACKUP_INTERVAL_HOURS is "how often scheduled backups run"; any
 * whole number ≥ 1 is accepted, so a large one must work.
 */

afterAll(cleanup)

test('BACKUP_INTERVAL_HOURS=720 takes one backup at start, not one after another', async () => {
  const dataDir = tempDir('pfin-interval-')
  const backupDir = join(tempDir('pfin-backups-'), 'b')
  const env = processEnv(dataDir, { LOG_FORMAT: 'off', BACKUP_DIR: backupDir, BACKUP_INTERVAL_HOURS: '720', BACKUP_KEEP: '3' })
  await adminJson(env, 'owner', 'create', '--name', 'Monthly')
  const server = await startServer(env)
  try {
    // The first backup is due at start (none exists yet) and runs about a second later.
    await Bun.sleep(6_000)
    const written = server.stderr().match(/backup written/g)?.length ?? 0
    // The failure this catches: several (each finished backup armed the next one 1 ms later), plus the overflow warning.
    expect(written).toBe(1)
    expect(server.stderr()).not.toContain('TimeoutOverflowWarning')
  } finally {
    server.proc.kill('SIGTERM')
    await server.proc.exited
  }
}, 30_000)
