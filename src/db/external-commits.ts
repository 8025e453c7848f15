import type { Database, Statement } from 'bun:sqlite'

/**
 * Notices commits made to a database by other connections (an admin command revoking a key,
 * changing an owner), through SQLite's own `PRAGMA data_version`: its value changes exactly
 * when another connection has committed since this one last asked.
 *
 * The pragma is a tiny read transaction, a few microseconds of file locking, so it runs at
 * most once per `intervalMs`; in between, callers are told nothing changed. A revocation is
 * therefore seen within `intervalMs` (CONTRACT §2 allows one second). Commits made through
 * this connection do not count: this process knows what it wrote.
 */
export class ExternalCommits {
  private readonly version: Statement<{ data_version: number | bigint }, []>
  private seen: number | bigint
  private checkedAt = Number.NEGATIVE_INFINITY
  private generation = 0

  constructor(
    db: Database,
    readonly intervalMs = 5,
  ) {
    this.version = db.prepare('PRAGMA data_version')
    this.seen = this.read()
  }

  /** A number that changes whenever another connection may have committed since the last change. */
  current(now: number): number {
    if (now - this.checkedAt < this.intervalMs) return this.generation
    this.checkedAt = now
    const version = this.read()
    if (version !== this.seen) {
      this.seen = version
      this.generation++
    }
    return this.generation
  }

  /**
   * Marks a change this process made that cached readers must see too (a key or grant revoked
   * through the API): the next `current` returns a new generation, as after another's commit.
   */
  changedHere(): void {
    this.generation++
  }

  close(): void {
    this.version.finalize()
  }

  private read(): number | bigint {
    return this.version.get()?.data_version ?? 0
  }
}
