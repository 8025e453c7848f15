/** The first copy of the WAL-index header: 48 bytes, as 32-bit words. */
const HEADER_WORDS = 12

/**
 * Notices commits to a WAL-mode SQLite file made by any process, without running a query.
 *
 * SQLite keeps a WAL-index header at the start of the shared-memory file `<db>-shm`
 * (https://www.sqlite.org/walformat.html, "The WAL-Index Header"): a change counter, the
 * last valid frame, the salts and a checksum. Every commit by any connection rewrites it,
 * and SQLite itself compares it to decide whether its page cache is still good. Mapping
 * the file and comparing those 48 bytes costs nanoseconds; even the smallest query costs
 * microseconds of file-lock system calls. Callers use `current()` to skip re-reading rows
 * that cannot have changed.
 *
 * Safety: the file is mapped only while the caller's own connection has it open (it then
 * holds SQLite's "dead man switch" lock, so no other process may truncate the file), and
 * `close()` must be called before that connection closes. When the file cannot be mapped
 * (no WAL, no shared memory), every call reports a possible change, so callers just query.
 */
export class CommitSignal {
  private header: Uint32Array | null
  private readonly seen = new Uint32Array(HEADER_WORDS)
  private generation = 0

  constructor(databasePath: string) {
    this.header = mapHeader(`${databasePath}-shm`)
    if (this.header) this.seen.set(this.header)
  }

  /** A number that differs from the one returned last time whenever a commit may have happened in between. */
  current(): number {
    const header = this.header
    if (!header) return ++this.generation
    let changed = false
    for (let i = 0; i < HEADER_WORDS; i++) {
      const word = header[i] as number
      if (word !== this.seen[i]) {
        this.seen[i] = word
        changed = true
      }
    }
    if (changed) this.generation++
    return this.generation
  }

  /** Whether commits are seen through shared memory (false: every call reports a change). */
  get watching(): boolean {
    return this.header !== null
  }

  close(): void {
    this.header = null
  }
}

function mapHeader(shmPath: string): Uint32Array | null {
  try {
    const bytes = Bun.mmap(shmPath, { shared: true })
    if (bytes.byteLength < HEADER_WORDS * 4 || bytes.byteOffset % 4 !== 0) return null
    return new Uint32Array(bytes.buffer, bytes.byteOffset, HEADER_WORDS)
  } catch {
    return null
  }
}
