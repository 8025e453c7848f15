import { timingSafeEqual } from 'node:crypto'
import type { ControlStore, KeyWithOwner, Owner } from '../db/control/store.ts'
import { newId } from '../db/ids.ts'
import { ApiError } from './errors.ts'
import type { Scope } from './scopes.ts'

/**
 * Personal API keys: `pfk_<keyId>_<secret>`, 256 random bits of secret, argon2id-hashed.
 *
 * argon2 runs once per key and process: after a successful verification the SHA-256 of the
 * secret is kept in a bounded cache and later requests compare digests in constant time.
 * Expiry is checked on every request. Revocation and owner changes come from other processes
 * (`key revoke`): the key and its owner are read again whenever SQLite reports that another
 * connection has committed to the control database (`PRAGMA data_version`, asked at most every
 * few milliseconds), so a revocation takes effect within milliseconds without a query per request.
 */

/**
 * Who is calling (a personal key, or an OAuth grant's access token, and the owner it belongs to)
 * and whose ledger it acts on (the subject): the same owner in `self` mode, another owner's under
 * a household grant in `delegated` mode (CONTRACT §30, `Pfin-Subject`). `keyId` is the id
 * `GET /v1/keys` lists: a key's `key_…` or an OAuth grant's `app_…`; rate limits count per
 * `keyId` (CONTRACT §7, §28). `principal.scopes` are the effective scopes: the key's, or under
 * delegation the key's that the household grant also holds.
 */
export interface AuthContext {
  principal: {
    kind: 'api_key' | 'oauth'
    keyId: string
    scopes: readonly Scope[]
    /** The key's own scopes (equal to `scopes` in self mode): what a refusal names. */
    keyScopes: readonly Scope[]
    owner: Owner
  }
  subject: Owner
  accessMode: 'self' | 'delegated'
  /** The household grant a delegated request acts under; null in self mode. */
  grant: { id: string; scopes: readonly Scope[]; expiresAt: number | null } | null
}

/**
 * A key: the prefix, its owner (group 1; keys made before CONTRACT §31 have none), the key id
 * (group 2) and the secret (group 3). The owner is in the clear so that a router can send the
 * request to the owner's node without a database; the key is refused when it is not its owner's.
 */
const KEY = 'pfk_(?:(own_[0-9a-f]{32})_)?(key_[0-9a-f]{32})_([A-Za-z0-9_-]{43})'
const KEY_FORMAT = new RegExp(`^${KEY}$`)
/** An OAuth access token (CONTRACT §28, §31): `pfa_[<ownerId>_]<grantId>_<secret>`, whole (group 4), its owner (group 5). */
export const ACCESS_TOKEN = 'pfa_(?:(own_[0-9a-f]{32})_)?app_[0-9a-f]{32}_[A-Za-z0-9_-]{43}'
/** `Authorization: Bearer <key or token>` in one pass; the scheme name is case-insensitive (RFC 9110), the credential is not. */
const BEARER_KEY = new RegExp(`^[Bb][Ee][Aa][Rr][Ee][Rr] +(?:${KEY}|(${ACCESS_TOKEN})) *$`)

/** The owner a credential names in the clear (CONTRACT §31), or null (none, or an old key without one). No database is read. */
export function ownerInCredential(authorization: string | null): string | null {
  const match = authorization ? BEARER_KEY.exec(authorization) : null
  return match ? ((match[1] ?? match[5] ?? null) as string | null) : null
}

/** The SHA-256 of an OAuth token or code, as control.db keeps it. */
export const tokenHash = (token: string): string => new Bun.CryptoHasher('sha256').update(token).digest('hex')

export function parseApiKey(token: string): { keyId: string; secret: string } | null {
  const m = KEY_FORMAT.exec(token)
  return m ? { keyId: m[2] as string, secret: m[3] as string } : null
}

/** Makes a new key for `ownerId` (`pfk_<ownerId>_<keyId>_<secret>`, CONTRACT §31): the plaintext (shown once) and the hash to store. */
export async function mintApiKey(ownerId: string): Promise<{ keyId: string; plaintext: string; secretHash: string }> {
  const keyId = newId('key')
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
  const { hash } = await argon2()
  return { keyId, plaintext: `pfk_${ownerId}_${keyId}_${secret}`, secretHash: await hash(secret) /* argon2id is the library's default */ }
}

/** The native argon2 module loads with the first key it checks or makes, not at start-up. */
let argon2Module: Promise<typeof import('@node-rs/argon2')> | undefined
const argon2 = () => (argon2Module ??= import('@node-rs/argon2'))

const sha256 = (text: string): Buffer => Bun.CryptoHasher.hash('sha256', text) as Buffer

function authContext({ key, owner }: KeyWithOwner): AuthContext {
  const scopes = key.scopes as Scope[]
  return { principal: { kind: 'api_key', keyId: key.id, scopes, keyScopes: scopes, owner }, subject: owner, accessMode: 'self', grant: null }
}

/** A Map used as a bounded least-recently-used cache. */
export class Lru<K, V> {
  private readonly map = new Map<K, V>()
  constructor(private readonly capacity: number) {}
  /** The most recently used key: using it again needs no reordering. */
  private newest: K | undefined
  get(key: K): V | undefined {
    const value = this.map.get(key)
    if (value !== undefined && key !== this.newest) {
      this.map.delete(key)
      this.map.set(key, value)
      this.newest = key
    }
    return value
  }
  set(key: K, value: V): void {
    this.map.delete(key)
    this.map.set(key, value)
    this.newest = key
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K)
  }
  delete(key: K): void {
    this.map.delete(key)
    if (key === this.newest) this.newest = undefined
  }
}

/**
 * After this many failed checks in a row from one client address for one key id, that pair is
 * locked, for twice as long each further time. The lock is the guesser's, not the key's: the
 * owner's correct secret from another address, or a secret this process verified before, passes.
 */
const FREE_FAILURES = 5
const MAX_LOCK_MS = 15 * 60_000
/**
 * argon2 checks running at once, all keys together: each takes a core for ~20 ms, and a flood
 * of made-up key ids costs one each (see `authenticate`), so it may take half the cores at most.
 */
const MAX_PARALLEL_CHECKS = Math.max(1, Math.floor(navigator.hardwareConcurrency / 2))
/** Checks waiting for a turn; past this a request is refused without one (a flood, not a client). */
const MAX_QUEUED_CHECKS = 256

/** A key verified once by this process: its digest and the caller it stands for. */
interface Verified {
  digest: Buffer
  context: AuthContext
  expiresAt: number | null
  /** The control database's external-commit generation when the key's row was last read. */
  readAt: number
  /** When a use of the key was last queued for writing (last-use times are kept to the minute). */
  usedAt: number
}

/** Who presented a key: the client address, read only when a check is needed (a request's state is one). */
export type ClientAddress = { readonly ip: string }

export class Authenticator {
  private readonly verified = new Lru<string, Verified>(10_000)
  /** OAuth access tokens seen, by SHA-256. */
  private readonly tokens = new Lru<string, { context: AuthContext; expiresAt: number; readAt: number; usedAt: number }>(10_000)
  /** Failed checks by client address and key id. */
  private readonly failures = new Lru<string, { count: number; lockedUntil: number }>(10_000)
  /** Last-use times waiting to be written (at most once a minute per key). */
  private readonly lastUsed = new Map<string, number>()
  /** Where a presented secret is hashed, so the hot path allocates no buffer. */
  private readonly presented = Buffer.alloc(32)
  /** The argon2 check under way for a key id: at most one at a time (see `verify`). */
  private readonly verifying = new Map<string, Promise<unknown>>()
  private readonly checks = new CheckQueue(MAX_PARALLEL_CHECKS, MAX_QUEUED_CHECKS)
  /** An argon2 hash of a random secret: what a key id without a usable key is checked against. */
  private decoy?: Promise<string>

  constructor(
    private readonly control: ControlStore,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The caller behind an `Authorization` header, or null for every kind of failure alike.
   * A key this process has verified before is answered synchronously; anything else returns a
   * promise, and costs one argon2 check whether or not the key id exists (CONTRACT §7), so
   * that the time of a refusal tells nothing about which key ids there are.
   */
  authenticate(authorization: string | null, client: ClientAddress): AuthContext | null | Promise<AuthContext | null> {
    const match = authorization ? BEARER_KEY.exec(authorization) : null
    if (!match) return null
    let found: AuthContext | null | Promise<AuthContext | null>
    try {
      found = match[4] ? this.checkToken(match[4]) : this.check(match[2] as string, match[3] as string, client)
    } catch (error) {
      // control.db failed (a lock held too long, a damaged file): the request fails like one whose
      // check ran later, through its promise, so the caller ends it in one place (a cluster node's
      // count of requests under way per owner included, CONTRACT §31).
      return Promise.reject(error)
    }
    const named = match[1] ?? match[5]
    if (!named) return found
    // A credential that names an owner must be that owner's: the router trusted the name.
    if (found instanceof Promise) return found.then((context) => (context?.subject.id === named ? context : null))
    return found?.subject.id === named ? found : null
  }

  /**
   * An OAuth access token: found by its SHA-256 (256 random bits: a lookup needs no slow hash,
   * and a refusal's time tells nothing a guesser could use), then cached like a key and read
   * again after any commit that may have revoked it.
   */
  private checkToken(token: string): AuthContext | null {
    const now = this.now()
    const hash = tokenHash(token)
    const generation = this.control.commits.current(now)
    let cached = this.tokens.get(hash)
    if (!cached || cached.readAt !== generation) {
      const found = this.control.oauth.findToken(hash)
      if (found?.token.kind !== 'access' || found.grant.revokedAt !== null) {
        this.tokens.delete(hash)
        return null
      }
      const scopes = found.grant.scopes as Scope[]
      const context: AuthContext = {
        principal: { kind: 'oauth', keyId: found.grant.id, scopes, keyScopes: scopes, owner: found.owner },
        subject: found.owner,
        accessMode: 'self',
        grant: null,
      }
      cached = { context, expiresAt: found.token.expiresAt, readAt: generation, usedAt: cached?.usedAt ?? 0 }
      this.tokens.set(hash, cached)
    }
    if (cached.expiresAt <= now) {
      this.tokens.delete(hash)
      return null
    }
    if (now - cached.usedAt >= 60_000) {
      cached.usedAt = now
      this.lastUsed.set(cached.context.principal.keyId, now)
    }
    return cached.context
  }

  /** A key or grant was revoked by this process (the API): cached credentials are read again before their next use. */
  revokedHere(): void {
    this.control.commits.changedHere()
  }

  private check(keyId: string, secret: string, client: ClientAddress): AuthContext | null | Promise<AuthContext | null> {
    const now = this.now()
    const cached = this.verified.get(keyId)
    if (cached) {
      // The hot path: the key and its owner are read again only after another process committed.
      const generation = this.control.commits.current(now)
      if (cached.readAt !== generation) {
        const found = this.control.findKey(keyId)
        if (!found || found.key.revokedAt !== null) {
          this.verified.delete(keyId)
          return this.refuse(keyId, client)
        }
        cached.context = authContext(found)
        cached.expiresAt = found.key.expiresAt
        cached.readAt = generation
      }
      if (cached.expiresAt !== null && cached.expiresAt <= now) {
        this.verified.delete(keyId)
        return this.refuse(keyId, client)
      }
      Bun.CryptoHasher.hash('sha256', secret, this.presented)
      if (!timingSafeEqual(cached.digest, this.presented)) return this.refuse(keyId, client)
      if (now - cached.usedAt >= 60_000) {
        cached.usedAt = now
        this.lastUsed.set(keyId, now)
      }
      return cached.context
    }
    return this.verify(keyId, secret, client)
  }

  /**
   * The slow path: reads the key and checks the secret with argon2. One check per key id at a
   * time: a request arriving while one runs waits for it and then checks again, so a burst of
   * wrong secrets for one key id costs the checks that lock it, not one each.
   */
  private verify(keyId: string, secret: string, client: ClientAddress): Promise<AuthContext | null> {
    const running = this.verifying.get(keyId)
    if (running) return running.then(() => this.check(keyId, secret, client))
    const verification = this.verifyNow(keyId, secret, client)
    // Settles either way and never rejects: the caller of `verification` handles its error.
    const settled: Promise<void> = verification.then(
      () => this.done(keyId, settled),
      () => this.done(keyId, settled),
    )
    this.verifying.set(keyId, settled)
    return verification
  }

  private done(keyId: string, settled: Promise<void>): void {
    if (this.verifying.get(keyId) === settled) this.verifying.delete(keyId)
  }

  private async verifyNow(keyId: string, secret: string, client: ClientAddress): Promise<AuthContext | null> {
    const address = client.ip
    if (this.locked(address, keyId)) return null
    const readAt = this.control.commits.current(this.now())
    const found = this.control.findKey(keyId)
    const usable = found && found.key.revokedAt === null && (found.key.expiresAt === null || found.key.expiresAt > this.now())
    // A key id that does not exist, or no longer works, is checked against the decoy: the same work.
    const hash = usable ? found.key.secretHash : await this.decoyHash()
    const ok = await this.argonCheck(hash, secret)
    if (!ok || !usable) return this.fail(address, keyId)
    this.failures.delete(`${address}\n${keyId}`)
    const context = authContext(found)
    const now = this.now()
    this.verified.set(keyId, { digest: sha256(secret), context, expiresAt: found.key.expiresAt, readAt, usedAt: now })
    this.lastUsed.set(keyId, now)
    return context
  }

  /**
   * A refusal on the hot path (a wrong secret, a key revoked or expired since) costs what one
   * of the slow path costs, so it tells nothing either; a locked pair is refused at once.
   */
  private refuse(keyId: string, client: ClientAddress): null | Promise<null> {
    const address = client.ip
    if (this.locked(address, keyId)) return null
    // A decoy that cannot be made refuses all the same.
    return this.decoyHash()
      .then((hash) => this.argonCheck(hash, 'not the secret'))
      .catch(() => false)
      .then(() => this.fail(address, keyId))
  }

  private locked(address: string, keyId: string): boolean {
    const failure = this.failures.get(`${address}\n${keyId}`)
    return failure !== undefined && failure.lockedUntil > this.now()
  }

  private fail(address: string, keyId: string): null {
    const slot = `${address}\n${keyId}`
    const count = (this.failures.get(slot)?.count ?? 0) + 1
    const lockMs = count > FREE_FAILURES ? Math.min(1000 * 2 ** (count - FREE_FAILURES - 1), MAX_LOCK_MS) : 0
    this.failures.set(slot, { count, lockedUntil: this.now() + lockMs })
    return null
  }

  /**
   * One argon2 check of `secret` against `hash`, in its turn (`checks`); false when it fails or
   * cannot run. With every turn taken it throws 503 `server_busy`: a key not checked is not a
   * wrong key, so the client is asked to retry and nothing counts towards a lock.
   */
  private argonCheck(hash: string, secret: string): Promise<boolean> {
    return this.checks
      .run(() => argon2().then((module) => module.verify(hash, secret)))
      .catch((error: unknown) => {
        if (error instanceof ChecksFull)
          throw new ApiError('server_busy', 'The server is checking many keys for the first time at once; retry in a second', { 'retry-after': '1' })
        return false
      })
  }

  private decoyHash(): Promise<string> {
    this.decoy ??= argon2().then((module) => module.hash(Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')))
    return this.decoy
  }

  /** Writes pending last-use times (called by the write-behind timer and at shutdown). */
  flush(): void {
    if (this.lastUsed.size === 0) return
    const keys = new Map<string, number>()
    const grants = new Map<string, number>()
    for (const [id, at] of this.lastUsed) (id.startsWith('app_') ? grants : keys).set(id, at)
    this.control.touchKeys(keys)
    if (grants.size > 0) this.control.oauth.touchGrants(grants)
    // Only once written: a write refused (control.db busy) is made again at the next flush.
    this.lastUsed.clear()
  }
}

/** Every argon2 turn is running and the queue is full (`MAX_QUEUED_CHECKS`). */
class ChecksFull extends Error {}

/**
 * Runs at most `parallel` tasks at once, in arrival order; past `queued` waiting tasks a new one
 * is refused at once. argon2 checks are the one costly thing a client without a key can cause.
 */
class CheckQueue {
  private running = 0
  private readonly waiting: (() => void)[] = []

  constructor(
    private readonly parallel: number,
    private readonly queued: number,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.parallel) this.running++
    else {
      if (this.waiting.length >= this.queued) throw new ChecksFull()
      // The finishing task hands its place over, so none can slip in between.
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    }
    try {
      return await task()
    } finally {
      const next = this.waiting.shift()
      if (next) next()
      else this.running--
    }
  }
}
