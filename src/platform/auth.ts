import { timingSafeEqual } from 'node:crypto'
import type { ControlStore, KeyWithOwner, Owner } from '../db/control/store.ts'
import { newId } from './ids.ts'
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

/** Who is calling (the key) and whose data it may touch (the owner): apart, so delegation can come later. */
export interface AuthContext {
  principal: { kind: 'api_key'; keyId: string; scopes: readonly Scope[] }
  subject: Owner
  accessMode: 'self'
}

/** A key: the prefix, the key id (group 1) and the secret (group 2). */
const KEY = 'pfk_(key_[0-9a-f]{32})_([A-Za-z0-9_-]{43})'
const KEY_FORMAT = new RegExp(`^${KEY}$`)
/** `Authorization: Bearer <key>` in one pass; the scheme name is case-insensitive (RFC 9110), the key is not. */
const BEARER_KEY = new RegExp(`^[Bb][Ee][Aa][Rr][Ee][Rr] +${KEY} *$`)

export function parseApiKey(token: string): { keyId: string; secret: string } | null {
  const m = KEY_FORMAT.exec(token)
  return m ? { keyId: m[1] as string, secret: m[2] as string } : null
}

/** Makes a new key: the plaintext (shown once) and the hash to store. */
export async function mintApiKey(): Promise<{ keyId: string; plaintext: string; secretHash: string }> {
  const keyId = newId('key')
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
  const { hash } = await argon2()
  return { keyId, plaintext: `pfk_${keyId}_${secret}`, secretHash: await hash(secret) /* argon2id is the library's default */ }
}

/** The native argon2 module loads with the first key it checks or makes, not at start-up. */
let argon2Module: Promise<typeof import('@node-rs/argon2')> | undefined
const argon2 = () => (argon2Module ??= import('@node-rs/argon2'))

const sha256 = (text: string): Buffer => Bun.CryptoHasher.hash('sha256', text) as Buffer

function authContext({ key, owner }: KeyWithOwner): AuthContext {
  return { principal: { kind: 'api_key', keyId: key.id, scopes: key.scopes as Scope[] }, subject: owner, accessMode: 'self' }
}

/** A Map used as a bounded least-recently-used cache. */
class Lru<K, V> {
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

/** After this many wrong secrets in a row a key id is locked, for twice as long each further time. */
const FREE_FAILURES = 5
const MAX_LOCK_MS = 15 * 60_000

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

export class Authenticator {
  private readonly verified = new Lru<string, Verified>(10_000)
  private readonly failures = new Lru<string, { count: number; lockedUntil: number }>(10_000)
  /** Last-use times waiting to be written (at most once a minute per key). */
  private readonly lastUsed = new Map<string, number>()
  /** Where a presented secret is hashed, so the hot path allocates no buffer. */
  private readonly presented = Buffer.alloc(32)
  /** The argon2 check under way for a key id: at most one at a time (see `verify`). */
  private readonly verifying = new Map<string, Promise<unknown>>()

  constructor(
    private readonly control: ControlStore,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The caller behind an `Authorization` header, or null for every kind of failure alike.
   * A key this process has verified before is answered synchronously; only a key's first
   * use returns a promise (argon2 runs off the main thread).
   */
  authenticate(authorization: string | null): AuthContext | null | Promise<AuthContext | null> {
    const match = authorization ? BEARER_KEY.exec(authorization) : null
    if (!match) return null
    return this.check(match[1] as string, match[2] as string)
  }

  private check(keyId: string, secret: string): AuthContext | null | Promise<AuthContext | null> {
    const now = this.now()
    const cached = this.verified.get(keyId)
    if (cached) {
      // The hot path: the key and its owner are read again only after another process committed.
      const generation = this.control.commits.current(now)
      if (cached.readAt !== generation) {
        const found = this.control.findKey(keyId)
        if (!found || found.key.revokedAt !== null) {
          this.verified.delete(keyId)
          return null
        }
        cached.context = authContext(found)
        cached.expiresAt = found.key.expiresAt
        cached.readAt = generation
      }
      if (cached.expiresAt !== null && cached.expiresAt <= now) {
        this.verified.delete(keyId)
        return null
      }
      Bun.CryptoHasher.hash('sha256', secret, this.presented)
      if (!timingSafeEqual(cached.digest, this.presented)) return this.fail(keyId, now)
      if (now - cached.usedAt >= 60_000) {
        cached.usedAt = now
        this.lastUsed.set(keyId, now)
      }
      return cached.context
    }
    return this.verify(keyId, secret, now)
  }

  /**
   * The slow path: reads the key and checks the secret with argon2. One check per key id at a
   * time: a request arriving while one runs waits for it and then checks again, so a burst of
   * wrong secrets for one key id costs the five argon2 checks that lock it, not one each (a
   * burst of 300 took 3.3 s of CPU and held every other key's first request behind it).
   */
  private verify(keyId: string, secret: string, now: number): Promise<AuthContext | null> {
    const running = this.verifying.get(keyId)
    if (running) return running.then(() => this.check(keyId, secret))
    const verification = this.verifyNow(keyId, secret, now)
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

  private async verifyNow(keyId: string, secret: string, now: number): Promise<AuthContext | null> {
    const readAt = this.control.commits.current(now)
    const found = this.control.findKey(keyId)
    if (!found) return null
    const { key } = found
    if (key.revokedAt !== null || (key.expiresAt !== null && key.expiresAt <= now)) return null
    const failure = this.failures.get(key.id)
    if (failure && failure.lockedUntil > now) return null
    let ok = false
    try {
      ok = await (await argon2()).verify(key.secretHash, secret)
    } catch {
      ok = false
    }
    if (!ok) return this.fail(key.id, this.now())
    this.failures.delete(key.id)
    const context = authContext(found)
    this.verified.set(key.id, { digest: sha256(secret), context, expiresAt: key.expiresAt, readAt, usedAt: now })
    this.lastUsed.set(key.id, now)
    return context
  }

  private fail(keyId: string, now: number): null {
    const previous = this.failures.get(keyId)
    const count = (previous?.count ?? 0) + 1
    const lockMs = count > FREE_FAILURES ? Math.min(1000 * 2 ** (count - FREE_FAILURES - 1), MAX_LOCK_MS) : 0
    this.failures.set(keyId, { count, lockedUntil: now + lockMs })
    return null
  }

  /** Writes pending last-use times (called by the write-behind timer and at shutdown). */
  flush(): void {
    if (this.lastUsed.size === 0) return
    const pending = new Map(this.lastUsed)
    this.lastUsed.clear()
    this.control.touchKeys(pending)
  }
}
