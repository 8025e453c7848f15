import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2'
import { timingSafeEqual } from 'node:crypto'
import type { ControlStore, KeyWithOwner, Owner } from '../db/control/store.ts'
import { newId } from './ids.ts'
import type { Scope } from './scopes.ts'

/**
 * Personal API keys: `pfk_<keyId>_<secret>`, 256 random bits of secret, argon2id-hashed.
 *
 * argon2 runs once per key and process: after a successful verification the SHA-256 of the
 * secret is kept in a bounded cache and later requests compare digests in constant time.
 * Expiry is checked on every request, and so is revocation: the key and its owner are read
 * again whenever the control database has seen a commit (from this process or any other,
 * such as `key revoke`) since they were last read, so a revocation takes effect on the
 * next request without a query on every request.
 */

/** Who is calling (the key) and whose data it may touch (the owner): apart, so delegation can come later. */
export interface AuthContext {
  principal: { kind: 'api_key'; keyId: string; scopes: readonly Scope[] }
  subject: Owner
  accessMode: 'self'
}

const KEY_FORMAT = /^pfk_(key_[0-9a-f]{32})_([A-Za-z0-9_-]{43})$/

export function parseApiKey(token: string): { keyId: string; secret: string } | null {
  const m = KEY_FORMAT.exec(token)
  return m ? { keyId: m[1] as string, secret: m[2] as string } : null
}

/** Makes a new key: the plaintext (shown once) and the hash to store. */
export async function mintApiKey(): Promise<{ keyId: string; plaintext: string; secretHash: string }> {
  const keyId = newId('key')
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
  return { keyId, plaintext: `pfk_${keyId}_${secret}`, secretHash: await argon2Hash(secret) /* argon2id is the library's default */ }
}

const sha256 = (text: string): Buffer => Bun.CryptoHasher.hash('sha256', text) as Buffer

function authContext({ key, owner }: KeyWithOwner): AuthContext {
  return { principal: { kind: 'api_key', keyId: key.id, scopes: key.scopes as Scope[] }, subject: owner, accessMode: 'self' }
}

/** A Map used as a bounded least-recently-used cache. */
class Lru<K, V> {
  private readonly map = new Map<K, V>()
  constructor(private readonly capacity: number) {}
  get(key: K): V | undefined {
    const value = this.map.get(key)
    if (value !== undefined) {
      this.map.delete(key)
      this.map.set(key, value)
    }
    return value
  }
  set(key: K, value: V): void {
    this.map.delete(key)
    this.map.set(key, value)
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K)
  }
  delete(key: K): void {
    this.map.delete(key)
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
  /** The control database's commit generation when the key's row was last read. */
  readAt: number
}

export class Authenticator {
  private readonly verified = new Lru<string, Verified>(10_000)
  private readonly failures = new Lru<string, { count: number; lockedUntil: number }>(10_000)
  /** Last-use times waiting to be written (at most once a minute per key). */
  private readonly lastUsed = new Map<string, number>()
  private readonly lastUsedWritten = new Map<string, number>()

  constructor(
    private readonly control: ControlStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** The caller behind an `Authorization` header, or null for every kind of failure alike. */
  async authenticate(authorization: string | null): Promise<AuthContext | null> {
    if (!authorization) return null
    const match = /^Bearer +(\S+) *$/i.exec(authorization)
    const parsed = match ? parseApiKey(match[1] as string) : null
    if (!parsed) return null
    const now = this.now()
    const cached = this.verified.get(parsed.keyId)
    if (cached) {
      // The hot path: the key and its owner are read again only if a commit may have changed them.
      const generation = this.control.commits.current()
      if (cached.readAt !== generation) {
        const found = this.control.findKey(parsed.keyId)
        if (!found || found.key.revokedAt !== null) {
          this.verified.delete(parsed.keyId)
          return null
        }
        cached.context = authContext(found)
        cached.expiresAt = found.key.expiresAt
        cached.readAt = generation
      }
      if (cached.expiresAt !== null && cached.expiresAt <= now) {
        this.verified.delete(parsed.keyId)
        return null
      }
      if (!timingSafeEqual(cached.digest, sha256(parsed.secret))) return this.fail(parsed.keyId, now)
      this.noteUse(parsed.keyId, now)
      return cached.context
    }
    const readAt = this.control.commits.current()
    const found = this.control.findKey(parsed.keyId)
    if (!found) return null
    const { key } = found
    if (key.revokedAt !== null || (key.expiresAt !== null && key.expiresAt <= now)) return null
    const failure = this.failures.get(key.id)
    if (failure && failure.lockedUntil > now) return null
    let ok = false
    try {
      ok = await argon2Verify(key.secretHash, parsed.secret)
    } catch {
      ok = false
    }
    if (!ok) return this.fail(key.id, this.now())
    this.failures.delete(key.id)
    const context = authContext(found)
    this.verified.set(key.id, { digest: sha256(parsed.secret), context, expiresAt: key.expiresAt, readAt })
    this.noteUse(key.id, now)
    return context
  }

  private fail(keyId: string, now: number): null {
    const previous = this.failures.get(keyId)
    const count = (previous?.count ?? 0) + 1
    const lockMs = count > FREE_FAILURES ? Math.min(1000 * 2 ** (count - FREE_FAILURES - 1), MAX_LOCK_MS) : 0
    this.failures.set(keyId, { count, lockedUntil: now + lockMs })
    return null
  }

  private noteUse(keyId: string, now: number): void {
    const written = this.lastUsedWritten.get(keyId) ?? 0
    if (now - written >= 60_000) {
      this.lastUsed.set(keyId, now)
      this.lastUsedWritten.set(keyId, now)
    }
  }

  /** Writes pending last-use times (called by the write-behind timer and at shutdown). */
  flush(): void {
    if (this.lastUsed.size === 0) return
    const pending = new Map(this.lastUsed)
    this.lastUsed.clear()
    this.control.touchKeys(pending)
    if (this.lastUsedWritten.size > 10_000) this.lastUsedWritten.clear()
  }
}
