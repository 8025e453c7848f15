import type { Database } from 'bun:sqlite'
import type { TenantRegistry } from '../../db/tenant/registry.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { today } from '../../platform/clock.ts'
import { tryWithoutWaiting } from '../../db/sqlite.ts'
import { postDue } from './posting.ts'
import { ownerNextDue } from './queries.ts'
import { changedOwners } from './service.ts'

/**
 * The auto-posting timer (CONTRACT §29), cheap with many owners: `control.db` keeps the next
 * date each owner has something to post (`schedule_due`, indexed by date), so a sweep reads the
 * owners due by today from one index and opens only those, never every owner file. The owner's
 * file stays the truth; the control row is a hint that may only be early (an early row costs one
 * open, which corrects it):
 * - a schedule write marks its owner (in memory); within a second the owner's next due date is
 *   read from its file (one seek of `schedules_next_post_idx`) and written to the control row;
 * - a sweep posts what is due and writes the owner's new next date;
 * - opening an owner's file posts what is due there, so an owner whose control row was lost (a
 *   crash in the second after a schedule write, a restore) is caught up by its next request.
 * Posting itself is exactly-once by the owner's file (posting.ts), whatever the hint says.
 */
/** How long after an owner's file opens its catch-up runs. */
const OPEN_DELAY_MS = 50

export class AutoPoster {
  constructor(
    private readonly control: Database,
    private readonly tenants: TenantRegistry,
    private readonly log: (message: string) => void,
    /** In a cluster (CONTRACT §31): whether this node may write the owner now (placed here, not moving). */
    private readonly serves: (ownerId: string) => boolean = () => true,
  ) {}

  /**
   * Records an owner's next due date without waiting for a lock another process holds on
   * control.db (the thread it would block answers every request): when busy, the owner is marked
   * again and its date written at the next sync, a second later (`wait`: at shutdown, it waits).
   */
  private setDue(ownerId: string, next: string | null, wait = false): void {
    const write = () => {
      if (next === null) this.control.query('DELETE FROM schedule_due WHERE owner_id = ?').run(ownerId)
      else
        this.control
          .query('INSERT INTO schedule_due (owner_id, next_due) VALUES (?, ?) ON CONFLICT (owner_id) DO UPDATE SET next_due = excluded.next_due')
          .run(ownerId, next)
    }
    if (wait) write()
    else if (!tryWithoutWaiting(this.control, write)) changedOwners.add(ownerId)
  }

  /** Posts what is due in one open owner file and records its next due date. */
  private catchUp(tenant: Tenant): void {
    try {
      postDue(tenant, today(), undefined, this.log)
      this.setDue(tenant.ownerId, ownerNextDue(tenant))
    } catch (error) {
      this.log(`auto-posting for owner ${tenant.ownerId} failed: ${String(error)}`)
    }
  }

  /** The owners whose schedules changed: their next due date to control.db (`wait`: at shutdown). */
  syncChanged(wait = false): void {
    for (const ownerId of [...changedOwners]) {
      changedOwners.delete(ownerId)
      const tenant = this.tenants.peek(ownerId)
      if (!tenant || tenant.closed) continue
      try {
        this.setDue(ownerId, ownerNextDue(tenant), wait)
      } catch (error) {
        this.log(`could not record the next due date of owner ${ownerId}: ${String(error)}`)
      }
    }
  }

  /** Every owner with something due by today: opened, posted, its next date recorded. */
  sweep(): number {
    this.syncChanged()
    // Prepared and finalized per sweep (once a minute): nothing of it stays open on the control
    // connection, which the write-behind of answers and counters shares.
    const statement = this.control.prepare<{ owner_id: string }, [string]>(
      'SELECT d.owner_id FROM schedule_due d JOIN owners o ON o.id = d.owner_id WHERE d.next_due <= ? ORDER BY d.next_due',
    )
    const due = statement.all(today())
    statement.finalize()
    for (const { owner_id: ownerId } of due) {
      // An owner placed on another node (or moving) is posted there: its file here is not its ledger.
      if (!this.serves(ownerId)) continue
      let tenant: Tenant
      try {
        tenant = this.tenants.get(ownerId)
      } catch (error) {
        this.log(`auto-posting could not open the file of owner ${ownerId}: ${String(error)}`)
        continue
      }
      this.catchUp(tenant)
    }
    return due.length
  }

  /**
   * An owner's file was opened: post what is due there (one indexed read when nothing is). On a
   * timer of its own, behind the turn's answers and their copies to control.db: a first request's
   * bookkeeping must not wait for it.
   */
  opened(tenant: Tenant): void {
    setTimeout(() => {
      if (tenant.closed || !this.serves(tenant.ownerId)) return
      try {
        const next = ownerNextDue(tenant)
        if (next !== null && next <= today()) this.catchUp(tenant)
      } catch (error) {
        this.log(`auto-posting for owner ${tenant.ownerId} failed: ${String(error)}`)
      }
    }, OPEN_DELAY_MS)
  }
}
