import type { TenantRegistry } from '../db/tenant/registry.ts'
import type { Tenant } from '../db/tenant/tenant.ts'
import { ApiError } from './errors.ts'

/**
 * Group commit: the writes that reach one owner in the same turn of the event loop share one
 * database transaction, so they share one commit and one fsync. Under concurrent writes to
 * one owner (an agent or a sync client with several requests in flight) this is where the
 * time goes: each commit waits for the disk, and meanwhile the next requests queue up anyway.
 *
 * Nothing is acknowledged before it is durable: every write's promise settles only after the
 * shared COMMIT returned. Each write runs in a savepoint of its own, so one that refuses
 * (an ApiError: a 4xx after some of its statements ran, like a batch whose item 499 is bad)
 * is rolled back alone and the others go on. Anything else (a storage error, a bug, a failed
 * COMMIT) rolls the whole group back, and each of its writes then runs again in a transaction
 * of its own, exactly as without grouping, so it fails or succeeds by itself.
 */
export class WriteGroups {
  private readonly pending = new Map<string, QueuedWrite[]>()
  /** Commits made for more than one write, for tests and the benchmark's explanation. */
  groupedCommits = 0

  constructor(private readonly tenants: TenantRegistry) {}

  /**
   * Runs `fn` (synchronous; its database work goes through `tenant`) in a write transaction
   * shared with the owner's other writes of this turn; resolves once that transaction committed.
   */
  run<T>(ownerId: string, fn: (tenant: Tenant) => T, options: { alone?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.pending.size === 0) setImmediate(() => this.flush())
      let queue = this.pending.get(ownerId)
      if (!queue) {
        queue = []
        this.pending.set(ownerId, queue)
      }
      queue.push({ fn, resolve: resolve as (value: unknown) => void, reject, alone: options.alone ?? false })
    })
  }

  /** Runs every queued write now (at the turn's end, and before the databases close). */
  flush(): void {
    const owners = [...this.pending]
    this.pending.clear()
    for (const [ownerId, writes] of owners) {
      let tenant: Tenant
      try {
        // The handlers reach the owner through the registry too, so they get this same connection.
        tenant = this.tenants.get(ownerId)
      } catch (error) {
        for (const write of writes) write.reject(error)
        continue
      }
      // In order: the writes between two that must run alone share a commit.
      let group: QueuedWrite[] = []
      const flushGroup = () => {
        if (group.length === 1) runAlone(tenant, group[0] as QueuedWrite)
        else if (group.length > 1) this.runGroup(tenant, group)
        group = []
      }
      for (const write of writes) {
        if (!write.alone) {
          group.push(write)
          continue
        }
        flushGroup()
        runAlone(tenant, write)
      }
      flushGroup()
    }
  }

  private runGroup(tenant: Tenant, writes: QueuedWrite[]): void {
    const outcomes: Outcome[] = []
    try {
      tenant.write(() => {
        for (const write of writes) {
          try {
            outcomes.push({ ok: true, value: tenant.savepoint(() => write.fn(tenant)) })
          } catch (error) {
            // A refusal is that write's answer; anything else ends the group (see above).
            if (!(error instanceof ApiError) || !tenant.sqlite.inTransaction) throw error
            outcomes.push({ ok: false, error })
          }
        }
      })
    } catch {
      for (const write of writes) runAlone(tenant, write)
      return
    }
    this.groupedCommits++
    writes.forEach((write, i) => {
      const outcome = outcomes[i] as Outcome
      if (outcome.ok) write.resolve(outcome.value)
      else write.reject(outcome.error)
    })
  }
}

interface QueuedWrite {
  fn: (tenant: Tenant) => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
  /** Commits in a transaction of its own (RouteDef.alone). */
  alone: boolean
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

function runAlone(tenant: Tenant, write: QueuedWrite): void {
  let value: unknown
  try {
    value = tenant.write(() => write.fn(tenant))
  } catch (error) {
    write.reject(error)
    return
  }
  write.resolve(value)
}
