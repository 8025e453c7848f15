import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { DataDirLock, makeDatabasePrivate } from '../db/data-dir.ts'
import { BackupError, type Manifest, verifyBackup } from './backup.ts'
import { bringBackOwner, copyCurrentControl, type KeptCredentials, keepCredentials } from './credentials.ts'
import { keepReplaced } from './replaced.ts'
import { describeRestore, type RestorePlan } from './restore-plan.ts'

/**
 * Restore (CONTRACT §18): puts a verified backup's copies back into DATA_DIR while no server
 * holds it (the restore takes the server lock itself, so none can start half way). A restored
 * owner file gets a new change-feed epoch, so sync clients' cursors expire (410) instead of
 * silently missing what the restore took away; and control.db forgets every stored answer that
 * the restored owner file does not hold, so no retry is told "done" for a write that is gone.
 * A whole restore brings control.db back too, but keeps the credentials of the one it replaces
 * (`keepCredentials`): restoring data never brings a revoked key back to life. Nothing it
 * replaces is lost: the plan says what will go (`planRestore`), and the replaced databases are
 * kept in `DATA_DIR/replaced-<UTC time>/` before the first one is replaced.
 */

type Progress = (message: string) => void

/** Replaces `target` with a copy of `source`, through SQLite on both sides. */
function place(source: string, target: string): void {
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 })
  const incoming = `${target}.restoring`
  rmSync(incoming, { force: true })
  const from = new Database(source, { readonly: true })
  try {
    from.run('VACUUM INTO ?', [incoming])
  } finally {
    from.close(true)
  }
  if (existsSync(target)) retire(target)
  renameSync(incoming, target)
  makeDatabasePrivate(target)
}

/**
 * Takes the old file out of the way. A readable one is first switched out of WAL mode by
 * SQLite, which folds its log in and deletes it; one SQLite cannot open (the damage a restore
 * is often for) is set aside with its log, renamed, for whoever wants to look at it.
 */
function retire(target: string): void {
  try {
    const db = new Database(target)
    try {
      db.run('PRAGMA busy_timeout = 10000')
      db.run('PRAGMA journal_mode = DELETE')
    } finally {
      db.close(true)
    }
  } catch {
    const aside = `${target}.replaced-${Date.now()}`
    for (const suffix of ['', '-wal', '-shm']) if (existsSync(target + suffix)) renameSync(target + suffix, aside + suffix)
  }
}

function renewEpoch(path: string): void {
  const db = new Database(path)
  try {
    const hasFeed = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'feed_state'").get() !== null
    // A file from before the change feed gets a fresh epoch from its migration when next opened.
    if (hasFeed) db.run('UPDATE feed_state SET epoch = lower(hex(randomblob(8))) WHERE id = 1')
  } finally {
    db.close(true)
  }
}

/** Drops the control database's stored answers for `ownerId` that its (restored) file does not hold. */
function forgetAnswersNotIn(control: Database, ownerId: string, tenantPath: string): number {
  control.run('ATTACH DATABASE ? AS restored', [tenantPath])
  try {
    return control.run('DELETE FROM idempotency_records WHERE owner_id = ? AND key NOT IN (SELECT key FROM restored.applied_requests)', [ownerId]).changes
  } finally {
    control.run('DETACH DATABASE restored')
  }
}

/** A verified backup's manifest; the owner asked for must be in it. */
async function verified(source: string, ownerId: string | undefined, progress: Progress): Promise<Manifest> {
  const { manifest, problems } = await verifyBackup(source, progress)
  if (problems.length > 0) throw new BackupError(`the backup in ${source} does not verify: ${problems.join('; ')}`)
  if (ownerId && !manifest.files.some((file) => file.ownerId === ownerId)) throw new BackupError(`owner ${ownerId} is not in the backup ${source}`)
  return manifest
}

/** What `restore` would replace; reads the data folder without changing (or creating) anything. */
export async function planRestore(dataDir: string, from: string, options: { ownerId?: string; progress?: Progress } = {}): Promise<RestorePlan> {
  const source = resolve(from)
  const manifest = await verified(source, options.ownerId, options.progress ?? (() => {}))
  return describeRestore(dataDir, source, manifest, options.ownerId)
}

export interface RestoreResult extends RestorePlan {
  /** Where the replaced databases are kept; null when the data folder held none of them. */
  replacedDir: string | null
  forgottenAnswers: number
  kept: KeptCredentials | null
}

export async function restore(
  dataDir: string,
  from: string,
  options: { ownerId?: string; progress?: Progress; warn?: (message: string) => void } = {},
): Promise<RestoreResult> {
  const source = resolve(from)
  const progress = options.progress ?? (() => {})
  const manifest = await verified(source, options.ownerId, progress)

  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const lock = DataDirLock.acquire(dataDir)
  try {
    // Planned again under the lock: what is kept and reported is what is there now.
    const plan = describeRestore(dataDir, source, manifest, options.ownerId)
    const wanted = manifest.files.filter((file) => plan.replacing.some((replacement) => replacement.path === file.path))
    progress('keeping the files being replaced')
    const replacedDir = keepReplaced(
      dataDir,
      plan.replacing.filter((replacement) => replacement.exists).map((replacement) => replacement.path),
    )
    // A whole restore brings control.db back first, so the owner files are checked against it.
    const ordered = [...wanted].sort((a, b) => (a.ownerId === null ? -1 : b.ownerId === null ? 1 : 0))
    const wholeControl = plan.control
    const previous = wholeControl ? copyCurrentControl(dataDir, options.warn) : null
    // A damaged control.db has been moved into the replaced folder by now: the plan knows it was there.
    if (wholeControl && previous === null && plan.replacing.some((file) => file.ownerId === null && file.exists)) {
      options.warn?.(
        'the control.db being replaced cannot be read, so nothing of it is kept: keys revoked since the backup are active again — revoke them again',
      )
    }
    for (const [index, file] of ordered.entries()) {
      progress(`restoring ${file.path} (${index + 1}/${ordered.length})`)
      place(join(source, file.path), join(dataDir, file.path))
      if (file.ownerId !== null) renewEpoch(join(dataDir, file.path))
    }
    // Nothing to keep where there was no control.db (a restore into a new data folder).
    const replacedControl = plan.replacing.some((file) => file.ownerId === null && file.exists)
    const kept = wholeControl && replacedControl ? keepCredentials(dataDir, previous) : null
    const control = new Database(join(dataDir, 'control.db'))
    let forgottenAnswers = 0
    try {
      control.run('PRAGMA busy_timeout = 10000')
      for (const file of ordered) {
        if (file.ownerId === null) continue
        if (options.ownerId) bringBackOwner(control, join(source, 'control.db'), file.ownerId)
        forgottenAnswers += forgetAnswersNotIn(control, file.ownerId, join(dataDir, file.path))
      }
    } finally {
      control.close(true)
    }
    return { ...plan, replacedDir, forgottenAnswers, kept }
  } finally {
    lock.release()
  }
}
