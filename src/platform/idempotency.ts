import { eq, sql } from 'drizzle-orm'
import { STORED_RESPONSE_FIELDS } from '../db/columns.ts'
import type { ControlStore, StoredResponse } from '../db/control/store.ts'
import type { Tenant, TenantDrizzle } from '../db/tenant/tenant.ts'
import { tryWithoutWaiting } from '../db/sqlite.ts'
import { fromExcluded, placeholders } from '../db/statements.ts'
import { appliedRequests } from '../db/tenant/schema.ts'
import type { AuthContext } from './auth.ts'
import { ApiError } from './errors.ts'

/**
 * Idempotency (CONTRACT §8). A key is scoped to its owner; its fingerprint is method +
 * path + SHA-256 of the canonical body. The response of a write is recorded in the tenant
 * file inside the write's own transaction, then copied to the control database just after
 * the response has gone out (the copies of one event-loop turn in one control transaction);
 * a retry after a crash between the two finds it in the tenant file, so nothing runs twice.
 */
export type { StoredResponse }

const KEY_FORMAT = /^[\x20-\x7e]{1,255}$/
/** How soon copies refused by a busy control.db (another process's transaction) are tried again. */
const BUSY_RETRY_MS = 250

/**
 * Reads the `Idempotency-Key` header of a POST, PATCH or PUT: 400 when it is absent (a PUT may
 * go without one, so its caller does not ask then) or malformed; on a PUT, where the key is
 * optional, a blank one is malformed rather than "missing".
 */
export function readIdempotencyKey(header: string | null, optional = false): string {
  if (optional && header !== null && header.trim() === '') {
    throw new ApiError('idempotency_key_invalid', 'Idempotency-Key must be 1 to 255 printable ASCII characters, not blank (or leave the header out)')
  }
  if (header === null || header.trim() === '') {
    throw new ApiError('idempotency_key_missing', 'The Idempotency-Key header is required on POST and PATCH requests')
  }
  if (!KEY_FORMAT.test(header)) {
    throw new ApiError('idempotency_key_invalid', 'Idempotency-Key must be 1 to 255 printable ASCII characters')
  }
  return header
}

/**
 * The key as kept in the subject's file: the client's own in self mode; under delegation
 * (CONTRACT §30) prefixed with the key owner's id and a line feed, which no client key can hold,
 * so the same key string sent for two ledgers, or by two people to one ledger, never collides.
 */
export function scopedIdempotencyKey(auth: AuthContext, key: string): string {
  return auth.accessMode === 'delegated' ? `${auth.principal.owner.id}\n${key}` : key
}

/**
 * `canonicalQuery`: a route whose options come in the query (an import, CONTRACT §24) hashes them
 * with the body, so a dry run and the real run of one file are different requests.
 */
export function fingerprint(method: string, path: string, canonicalBody: string, canonicalQuery?: string): string {
  const hasher = new Bun.CryptoHasher('sha256').update(canonicalBody)
  if (canonicalQuery !== undefined) hasher.update('\n').update(canonicalQuery)
  return `${method} ${path} ${hasher.digest('hex')}`
}

const appliedLookup = (db: TenantDrizzle) =>
  db
    .select()
    .from(appliedRequests)
    .where(eq(appliedRequests.key, sql.placeholder('key')))
    .prepare()

// An expired record of the same key may linger until the next purge: the new response replaces it.
const appliedRecord = (db: TenantDrizzle) =>
  db
    .insert(appliedRequests)
    .values(placeholders(appliedRequests, ['key', ...STORED_RESPONSE_FIELDS]))
    .onConflictDoUpdate({ target: appliedRequests.key, set: fromExcluded(appliedRequests, STORED_RESPONSE_FIELDS) })
    .prepare()

/**
 * Answers larger than this are kept in the owner's file only, never copied to control.db: a
 * 500-item batch answers ~1 MB, and a copy of each would let one key fill the shared disk with
 * answers it can replay from its own file anyway (one indexed lookup there).
 */
export const CONTROL_COPY_MAX_BYTES = 16 * 1024

const worthCopying = (response: StoredResponse) => response.body.length <= CONTROL_COPY_MAX_BYTES

interface Copy {
  ownerId: string
  key: string
  response: StoredResponse
}

export class IdempotencyStore {
  /** Keys whose first request is still running, with the token of the request that holds it. */
  private readonly inFlight = new Map<string, symbol>()
  /** Committed answers not yet copied to the control database, by owner and key. */
  private readonly uncopied = new Map<string, Copy>()

  constructor(
    private readonly control: ControlStore,
    readonly ttlMs: number,
    private readonly log: (message: string) => void = console.error,
    private readonly now: () => number = Date.now,
  ) {}

  /** The stored response for this key: not yet copied, from the control database, or else from the tenant file. */
  find(tenant: Tenant, key: string): StoredResponse | undefined {
    const cutoff = this.now() - this.ttlMs
    const stored = this.uncopied.get(`${tenant.ownerId}\n${key}`)?.response ?? this.control.findResponse(tenant.ownerId, key)
    if (stored && stored.createdAt >= cutoff) return stored
    const applied = tenant.prepared(appliedLookup).get({ key })
    if (!applied || applied.createdAt < cutoff) return undefined
    const { key: _key, ...response } = applied
    if (!worthCopying(response)) return response
    try {
      this.control.saveResponse(tenant.ownerId, key, response)
    } catch {
      // Only a cache of the tenant record, which answered: the copy is tried again next time.
    }
    return response
  }

  /** Claims the key for this request; null when another request holds it. */
  claim(ownerId: string, key: string): symbol | null {
    const slot = `${ownerId}\n${key}`
    if (this.inFlight.has(slot)) return null
    const token = Symbol(slot)
    this.inFlight.set(slot, token)
    return token
  }

  release(ownerId: string, key: string, token: symbol): void {
    const slot = `${ownerId}\n${key}`
    if (this.inFlight.get(slot) === token) this.inFlight.delete(slot)
  }

  /** Records the response in the tenant file; call inside the write's transaction. */
  recordInTenant(tenant: Tenant, key: string, response: StoredResponse): void {
    tenant.prepared(appliedRecord).run({ key, ...response })
  }

  /**
   * Queues a committed answer for the control database. The tenant record is the truth, so the
   * copy need not delay the response: it is written once the event loop turns (or at
   * `copyNow`), and a copy that fails (a full disk) is only logged, for it is repaired from the
   * tenant record on the next lookup of its key.
   */
  recordInControl(ownerId: string, key: string, response: StoredResponse): void {
    if (!worthCopying(response)) return
    // The first copy of a turn schedules the write; the others join it. A timer, not
    // setImmediate: Bun writes a turn's answers after its immediates, and the copy is the
    // answer's shadow, so the answer goes out first. A busy control.db does not hold it either:
    // `copyNow(false)` does not wait for another process's lock.
    if (this.uncopied.size === 0) setTimeout(() => this.copyNow(false), 0)
    this.uncopied.set(`${ownerId}\n${key}`, { ownerId, key, response })
  }

  /**
   * Writes the queued copies, in one control transaction. From the timer it does not wait for a
   * lock another process holds (an admin command's transaction): the copies wait for a later
   * round instead of the thread that answers every request. At shutdown (`wait`) it waits as long
   * as SQLite's busy timeout.
   */
  copyNow(wait = true): void {
    if (this.uncopied.size === 0) return
    const copies = [...this.uncopied.values()]
    try {
      const save = () => this.control.saveResponses(copies)
      if (wait) save()
      else if (!tryWithoutWaiting(this.control.sqlite, save)) {
        setTimeout(() => this.copyNow(false), BUSY_RETRY_MS)
        return
      }
    } catch (error) {
      this.log(`${copies.length} idempotency record(s) not copied to control.db (the owners' files keep them): ${String(error)}`)
    }
    // Written (or failed for good, and logged): nothing joined the queue since `copies` was read.
    this.uncopied.clear()
  }

  /** Drops one owner's expired records (when its file opens: the periodic purge sees open files only). */
  purgeTenant(tenant: Tenant): void {
    tenant.purgeAppliedRequests(this.now() - this.ttlMs)
  }

  /** Expired copies of answers in control.db (the owners' own records: `purgeTenant`). */
  purgeCopies(): void {
    this.control.purgeResponses(this.now() - this.ttlMs)
  }
}
