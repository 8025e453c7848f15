/**
 * What a storage error means for the client (CONTRACT §6): the disk is full (507, nothing was
 * written), or the file cannot be used now (503). bun:sqlite's errors carry SQLite's result
 * code name in `code` (`SQLITE_FULL`, `SQLITE_CORRUPT`, …).
 */
export type StorageFailure = 'full' | 'unavailable'

function sqliteCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined
}

/** SQLITE_FULL: the disk (or `max_page_count`) is full; SQLite rolled the statement back. */
export function isDiskFull(error: unknown): boolean {
  return sqliteCode(error) === 'SQLITE_FULL'
}

/**
 * SQLITE_BUSY or SQLITE_LOCKED: another connection holds the lock. Read through `cause` too, for
 * an error a library wrapped around SQLite's.
 */
export function isBusy(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 4; cause = (cause as { cause?: unknown }).cause, depth++) {
    const code = sqliteCode(cause)
    if (code?.startsWith('SQLITE_BUSY') || code?.startsWith('SQLITE_LOCKED')) return true
  }
  return false
}

export function storageFailure(error: unknown): StorageFailure | null {
  const code = sqliteCode(error)
  if (code === undefined) return null
  if (code === 'SQLITE_FULL') return 'full'
  // Damaged (CORRUPT, NOTADB, IOERR) or out of reach for now (CANTOPEN, BUSY, …): 503 either way.
  if (/^SQLITE_(CORRUPT|NOTADB|IOERR|CANTOPEN|BUSY|LOCKED|READONLY|PERM|NOMEM)/.test(code)) return 'unavailable'
  return null
}
