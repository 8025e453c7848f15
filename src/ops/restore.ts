import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { migrations as controlMigrations } from '../../drizzle/control/manifest.ts'
import { DataDirLock, makeDatabasePrivate } from '../db/data-dir.ts'
import { openDatabase } from '../db/sqlite.ts'
import { BackupError, type ManifestFile, verifyBackup } from './backup.ts'

/**
 * Restore (CONTRACT §18): puts a verified backup's copies back into DATA_DIR while no server
 * holds it (the restore takes the server lock itself, so none can start half way). A restored
 * owner file gets a new change-feed epoch, so sync clients' cursors expire (410) instead of
 * silently missing what the restore took away; and control.db forgets every stored answer that
 * the restored owner file does not hold, so no retry is told "done" for a write that is gone.
 * A whole restore brings control.db back too, but keeps the credentials of the one it replaces
 * (`keepCredentials`): restoring data never brings a revoked key back to life.
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

/**
 * An owner missing from the current control database (deleted since) comes back, its keys
 * listed but revoked: deleting the owner ended them, and whether one was revoked or leaked
 * before that is no longer known. The operator makes a new key (`key create`).
 */
function bringBackOwner(control: Database, backupControl: string, ownerId: string): void {
  if (control.query('SELECT 1 FROM owners WHERE id = ?').get(ownerId) !== null) return
  control.run('ATTACH DATABASE ? AS saved', [backupControl])
  try {
    control.transaction(() => {
      control.run('INSERT INTO owners SELECT * FROM saved.owners WHERE id = ?', [ownerId])
      control.run('INSERT OR IGNORE INTO api_keys SELECT * FROM saved.api_keys WHERE owner_id = ?', [ownerId])
      control.run('UPDATE api_keys SET revoked_at = ? WHERE owner_id = ? AND revoked_at IS NULL', [Date.now(), ownerId])
    })()
  } finally {
    control.run('DETACH DATABASE saved')
  }
}

/** What a whole restore kept of the control database it replaced. */
export interface KeptCredentials {
  /** Keys revoked since the backup, revoked again in the restored control.db. */
  revokedKeys: number
  /** Keys made since the backup (for owners the restored control.db knows), kept. */
  newKeys: number
  /** Owners created since the backup: not in it, so their files were left as they are, and their rows, keys and stored answers kept. */
  newOwners: string[]
  /** False when the replaced control.db could not be read (missing or damaged): nothing was kept. */
  read: boolean
}

const CONTROL_BEFORE_RESTORE = 'control.db.before-restore'

/**
 * A copy of the control database about to be replaced, made by SQLite; null when there is none
 * or it cannot be read. The copy is complete once it has its name, and is removed only when
 * its credentials are kept: so a copy already there is from a restore that was interrupted
 * after it replaced control.db, and holds the credentials that run replaced. It is kept, not
 * remade from the backup's control.db now in place (which would bring revoked keys back).
 */
function copyCurrentControl(dataDir: string, warn?: (message: string) => void): string | null {
  const copy = join(dataDir, CONTROL_BEFORE_RESTORE)
  const current = join(dataDir, 'control.db')
  if (existsSync(copy)) {
    warn?.(
      `an interrupted restore left ${CONTROL_BEFORE_RESTORE}: its credentials (revocations, newer keys and owners) are kept, with those of the control.db in place now`,
    )
    // The control.db in place now may be the real one (the run stopped before replacing it, and
    // keys were revoked since) or the backup's: its credentials join the copy's either way.
    try {
      if (existsSync(current)) mergeCredentials(copy, current)
    } catch (error) {
      warn?.(
        `the control.db in place cannot be read (${error instanceof Error ? error.message : String(error)}): only ${CONTROL_BEFORE_RESTORE}'s credentials are kept`,
      )
    }
    return copy
  }
  if (!existsSync(current)) return null
  const partial = `${copy}.partial`
  for (const suffix of ['', '-wal', '-shm']) rmSync(partial + suffix, { force: true })
  try {
    const db = new Database(current)
    try {
      db.run('PRAGMA busy_timeout = 10000')
      db.run('VACUUM INTO ?', [partial])
    } finally {
      db.close(true)
    }
    // Brought to this version's schema, like the restored copy, so their rows line up column for column.
    openDatabase(partial, { synchronous: 'NORMAL', migrations: controlMigrations }).close(true)
    renameSync(partial, copy)
    return copy
  } catch {
    for (const suffix of ['', '-wal', '-shm']) rmSync(partial + suffix, { force: true })
    return null
  }
}

/**
 * Keys are credentials, not data: after a whole restore, a key revoked since the backup (a
 * leaked one, say) stays revoked, and keys made since keep working. An owner created since the
 * backup is not in it, so its file is left untouched; its row, keys and stored answers are kept
 * with it, rather than leaving a file no owner points to. Everything else in control.db (owners'
 * profiles, stored answers of restored owners) is the backup's.
 */
function keepCredentials(dataDir: string, previous: string | null): KeptCredentials {
  if (previous === null) return { revokedKeys: 0, newKeys: 0, newOwners: [], read: false }
  try {
    return mergeCredentials(join(dataDir, 'control.db'), previous)
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(previous + suffix, { force: true })
  }
}

/** Brings `from`'s revocations, and the keys and owners `into` lacks, into the control database `into`. */
function mergeCredentials(into: string, from: string): KeptCredentials {
  const control = openDatabase(into, { synchronous: 'NORMAL', migrations: controlMigrations })
  try {
    control.run('ATTACH DATABASE ? AS previous', [from])
    try {
      return control.transaction(() => {
        const revokedKeys = control.run(
          `UPDATE main.api_keys SET revoked_at = (SELECT p.revoked_at FROM previous.api_keys p WHERE p.id = api_keys.id)
           WHERE revoked_at IS NULL AND id IN (SELECT id FROM previous.api_keys WHERE revoked_at IS NOT NULL)`,
        ).changes
        const newOwners = control
          .query<{ id: string }, []>('SELECT id FROM previous.owners WHERE id NOT IN (SELECT id FROM main.owners) ORDER BY id')
          .all()
          .map((row) => row.id)
        control.run('INSERT INTO main.owners SELECT * FROM previous.owners WHERE id NOT IN (SELECT id FROM main.owners)')
        const newKeys = control.run(
          `INSERT INTO main.api_keys SELECT * FROM previous.api_keys
           WHERE id NOT IN (SELECT id FROM main.api_keys) AND owner_id IN (SELECT id FROM main.owners)`,
        ).changes
        for (const ownerId of newOwners) {
          control.run('INSERT OR IGNORE INTO main.idempotency_records SELECT * FROM previous.idempotency_records WHERE owner_id = ?', [ownerId])
        }
        return { revokedKeys, newKeys, newOwners, read: true }
      })()
    } finally {
      control.run('DETACH DATABASE previous')
    }
  } finally {
    control.close(true)
  }
}

export async function restore(
  dataDir: string,
  from: string,
  options: { ownerId?: string; progress?: Progress; warn?: (message: string) => void } = {},
): Promise<{ from: string; owners: string[]; control: boolean; forgottenAnswers: number; kept: KeptCredentials | null }> {
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
    const wholeControl = ordered.some((file) => file.ownerId === null)
    const previous = wholeControl ? copyCurrentControl(dataDir, options.warn) : null
    if (wholeControl && previous === null && existsSync(join(dataDir, 'control.db'))) {
      options.warn?.(
        'the control.db being replaced cannot be read, so nothing of it is kept: keys revoked since the backup are active again — revoke them again',
      )
    }
    for (const [index, file] of ordered.entries()) {
      progress(`restoring ${file.path} (${index + 1}/${ordered.length})`)
      place(join(source, file.path), join(dataDir, file.path))
      if (file.ownerId !== null) renewEpoch(join(dataDir, file.path))
    }
    const kept = wholeControl ? keepCredentials(dataDir, previous) : null
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
      control: wholeControl,
      forgottenAnswers,
      kept,
    }
  } finally {
    lock.release()
  }
}
