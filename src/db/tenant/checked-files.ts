import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'

/**
 * Owner files this process has checked (`PRAGMA quick_check`) and then closed itself, each
 * with what the filesystem said of it (and of its write-ahead log) right after the close.
 *
 * Reopening an evicted owner whose file and log are exactly as this process left them (same
 * inode, size, and modification and status-change times to the nanosecond) skips the check:
 * it would read the whole file (70 MB for 100k transactions) to find what was found a moment
 * ago. Any write through SQLite (an admin command, a restore, a copy over it) changes those
 * times, so such a file is checked again. The status-change time cannot be set back by a user,
 * so a file edited and then `touch`ed to its old time is still seen as changed.
 *
 * Only `stat` is used: pfin never opens, maps or locks a database file outside SQLite.
 * Bounded: the oldest entries are dropped first, which only means a check is run again.
 * A server keeps the list across a clean restart (`save`, `takeSaved`): after a crash, none.
 */
export class CheckedFiles {
  private readonly seen = new Map<string, string>()

  constructor(private readonly capacity = 65_536) {}

  /** After this process closed `path` cleanly, having checked it when it opened it. */
  remember(path: string): void {
    const print = fingerprint(path)
    this.seen.delete(path)
    if (print === undefined) return
    this.seen.set(path, print)
    if (this.seen.size > this.capacity) {
      const [oldest] = this.seen.keys()
      this.seen.delete(oldest as string)
    }
  }

  /** The file may have been damaged (a storage error): check it at the next open. */
  forget(path: string): void {
    this.seen.delete(path)
  }

  /** Whether `path` and its log are exactly as this process left them after checking them. */
  unchangedSinceChecked(path: string): boolean {
    const kept = this.seen.get(path)
    return kept !== undefined && kept === fingerprint(path)
  }

  /**
   * Writes what is remembered to `listPath` (by rename: whole or not at all), for the next server
   * on the data folder: a clean shutdown's closes were clean, so its files need no check while
   * they stay as left.
   */
  save(listPath: string): void {
    writeFileSync(`${listPath}.tmp`, JSON.stringify({ files: [...this.seen] }), { mode: 0o600 })
    renameSync(`${listPath}.tmp`, listPath)
  }

  /**
   * Takes what a clean shutdown saved at `listPath`, and removes the list at once: a server that
   * then stops without a clean shutdown (a crash, SIGKILL) leaves none, and the next one checks
   * every file it opens. An unreadable list is only more checks.
   */
  takeSaved(listPath: string): void {
    if (!existsSync(listPath)) return
    try {
      const saved = JSON.parse(readFileSync(listPath, 'utf8')) as { files?: unknown }
      if (Array.isArray(saved.files)) {
        for (const entry of saved.files.slice(-this.capacity)) {
          if (Array.isArray(entry) && typeof entry[0] === 'string' && typeof entry[1] === 'string') this.seen.set(entry[0], entry[1])
        }
      }
    } catch {
      this.seen.clear()
    } finally {
      rmSync(listPath, { force: true })
    }
  }
}

function fingerprint(path: string): string | undefined {
  const file = statOf(path)
  if (file === undefined) return undefined
  return `${file}|${statOf(`${path}-wal`) ?? 'no log'}`
}

function statOf(path: string): string | undefined {
  const stat = statSync(path, { bigint: true, throwIfNoEntry: false })
  if (!stat) return undefined
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`
}
