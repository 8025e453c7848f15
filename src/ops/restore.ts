import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { DataDirLock, makeDatabasePrivate } from '../db/data-dir.ts'
import { BackupError, type ManifestFile, verifyBackup } from './backup.ts'

/**
 * Restore (CONTRACT §18): puts a verified backup's copies back into DATA_DIR while no server
 * holds it (the restore takes the server lock itself, so none can start half way). A restored
 * owner file gets a new change-feed epoch, so sync clients' cursors expire (410) instead of
 * silently missing what the restore took away; and control.db forgets every stored answer that
 * the restored owner file does not hold, so no retry is told "done" for a write that is gone.
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

/** An owner missing from the current control database (deleted since) comes back with its keys. */
function bringBackOwner(control: Database, backupControl: string, ownerId: string): void {
  if (control.query('SELECT 1 FROM owners WHERE id = ?').get(ownerId) !== null) return
  control.run('ATTACH DATABASE ? AS saved', [backupControl])
  try {
    control.transaction(() => {
      control.run('INSERT INTO owners SELECT * FROM saved.owners WHERE id = ?', [ownerId])
      control.run('INSERT OR IGNORE INTO api_keys SELECT * FROM saved.api_keys WHERE owner_id = ?', [ownerId])
    })()
  } finally {
    control.run('DETACH DATABASE saved')
  }
}

export async function restore(
  dataDir: string,
  from: string,
  options: { ownerId?: string; progress?: Progress } = {},
): Promise<{ from: string; owners: string[]; control: boolean; forgottenAnswers: number }> {
  const source = resolve(from)
  const progress = options.progress ?? (() => {})
  const { manifest, problems } = await verifyBackup(source, progress)
  if (problems.length > 0) throw new BackupError(`the backup in ${source} does not verify: ${problems.join('; ')}`)
  const wanted: ManifestFile[] = options.ownerId ? manifest.files.filter((file) => file.ownerId === options.ownerId) : manifest.files
  if (options.ownerId && wanted.length === 0) throw new BackupError(`owner ${options.ownerId} is not in the backup ${source}`)

  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const lock = DataDirLock.acquire(dataDir)
  try {
    // A whole restore brings control.db back first, so the owner files are checked against it.
    const ordered = [...wanted].sort((a, b) => (a.ownerId === null ? -1 : b.ownerId === null ? 1 : 0))
    for (const [index, file] of ordered.entries()) {
      progress(`restoring ${file.path} (${index + 1}/${ordered.length})`)
      place(join(source, file.path), join(dataDir, file.path))
      if (file.ownerId !== null) renewEpoch(join(dataDir, file.path))
    }
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
    return {
      from: source,
      owners: ordered.flatMap((file) => (file.ownerId === null ? [] : [file.ownerId])),
      control: ordered.some((file) => file.ownerId === null),
      forgottenAnswers,
    }
  } finally {
    lock.release()
  }
}
