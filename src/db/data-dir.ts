import { Database } from 'bun:sqlite'
import { accessSync, chmodSync, constants, existsSync, mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** The data folder cannot be used: the message names the path, the variable and what to do. */
export class DataDirError extends Error {}

/**
 * Litestream's configuration in a DATA_DIR, written by a node that replicates it (CONTRACT §31):
 * while it is there, every pfin process opening that folder's databases (the server, admin
 * commands, `pfin cluster`) leaves checkpoints to Litestream.
 */
export const LITESTREAM_CONFIG = 'litestream.yml'

/** Whether Litestream replicates this DATA_DIR (its configuration is there). */
export function replicatedDataDir(dataDir: string): boolean {
  return existsSync(join(dataDir, LITESTREAM_CONFIG))
}

/** The owner files a server checked and closed in its clean shutdown, for the next server (CONTRACT §14). */
export const CHECKED_FILES_LIST = 'checked-files.json'

const PRIVATE_DIR = 0o700
const PRIVATE_FILE = 0o600

/**
 * Files pfin creates are readable by their owner only (CONTRACT §14): money data must not be
 * world-readable. SQLite creates its files (and their -wal and -shm companions) with the mode
 * the umask leaves, so the process umask is narrowed once, before anything is created.
 */
export function makeNewFilesPrivate(): void {
  process.umask(0o077)
}

/**
 * Makes sure `dir` (DATA_DIR or a folder inside it) exists, is private and writable, with a
 * message a person can act on when it is not.
 */
export function prepareDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR })
  } catch (error) {
    throw new DataDirError(`cannot create the data folder ${dir} (DATA_DIR): ${reason(error)}. Create it, or set DATA_DIR to a folder this user can write.`)
  }
  try {
    accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK)
  } catch (error) {
    throw new DataDirError(
      `the data folder ${dir} (DATA_DIR) is not writable by this user: ${reason(error)}. Fix its owner or permissions, or set DATA_DIR to another folder.`,
    )
  }
  tighten(dir, PRIVATE_DIR)
}

/** Narrows an existing database file (and its -wal/-shm companions) made by an older pfin to owner-only. */
export function makeDatabasePrivate(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) tighten(file, PRIVATE_FILE)
}

/** chmod only touches the inode's mode: it opens nothing and leaves SQLite's locks alone. */
function tighten(path: string, mode: number): void {
  try {
    if (existsSync(path) && (statSync(path).mode & 0o777 & ~mode) !== 0) chmodSync(path, mode)
  } catch {
    // Not ours to change (another user's file): the server still runs; the umask covers new files.
  }
}

function reason(error: unknown): string {
  const code = (error as { code?: string }).code
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied'
  if (code === 'EROFS') return 'read-only file system'
  if (code === 'ENOTDIR') return 'a part of the path is a file, not a folder'
  if (code === 'ENOSPC') return 'no space left on the device'
  if (code === 'EEXIST') return 'a file (or a link to nothing) is in the way, not a folder'
  if (code === 'ELOOP') return 'the path loops through symbolic links'
  return code ?? String(error)
}

/**
 * One server per DATA_DIR (CONTRACT §14): its rate-limit counters and in-progress idempotency
 * claims live in memory, so a second server on the same files would break both.
 *
 * The claim is an exclusive lock on a small SQLite file of its own, `DATA_DIR/server.lock`,
 * taken through SQLite (`locking_mode = EXCLUSIVE`): the operating system releases it when the
 * process ends in any way, SIGKILL included, so a crashed server never leaves a stale claim.
 * Taking it writes nothing once the file exists: `BEGIN EXCLUSIVE` takes the lock and the
 * locking mode keeps it past the empty commit, so a start pays no fsync for its claim.
 */
export class DataDirLock {
  private constructor(private readonly db: Database) {}

  static acquire(dataDir: string): DataDirLock {
    const path = join(dataDir, 'server.lock')
    const db = new Database(path, { create: true })
    try {
      db.run('PRAGMA busy_timeout = 0')
      db.run('PRAGMA locking_mode = EXCLUSIVE')
      db.run('BEGIN EXCLUSIVE')
      // Written once, when the file is new; the file holds nothing else. (Older versions also
      // kept a `holder` row with their pid, rewritten at every start: that cost an fsync.)
      db.run('CREATE TABLE IF NOT EXISTS claim (id INTEGER PRIMARY KEY)')
      // In EXCLUSIVE locking mode the lock outlives the commit, until the connection closes.
      db.run('COMMIT')
    } catch (error) {
      db.close()
      if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) {
        throw new DataDirError(`another pfin server is already using the data folder ${dataDir} (DATA_DIR). Stop it first, or set DATA_DIR to another folder.`)
      }
      throw error
    }
    return new DataDirLock(db)
  }

  release(): void {
    this.db.close()
  }
}
