import type { ControlStore } from '../db/control/store.ts'
import { isId } from '../db/ids.ts'
import { type AuthContext, Lru } from './auth.ts'
import { ApiError } from './errors.ts'
import type { Scope } from './scopes.ts'

/**
 * Households (CONTRACT §30): `Pfin-Subject: own_…` makes a request act on another owner's
 * ledger under the grant that owner gave the key's owner. No header, or the key owner's own id,
 * is self mode, exactly as without households.
 *
 * Whatever is wrong with the header (not an owner id, an owner that does not exist, no grant,
 * a revoked or expired one) the answer is the same 404: the existence of other owners does not
 * leak. A grant is read once and cached beside the key's context; it is read again whenever
 * control.db was committed to by anyone (`commits`, as for keys), so a revocation holds within
 * milliseconds, and its expiry is checked on every request.
 */

interface Resolved {
  /** The self-mode context this one was made from: a key re-read makes a new one, and this is made again. */
  base: AuthContext
  context: AuthContext
  readAt: number
  expiresAt: number | null
}

export const NO_SUBJECT = "Pfin-Subject names no ledger this key's owner may act on"

const noSubject = () => new ApiError('not_found', `${NO_SUBJECT}: there is no live grant to it (ask its owner for one, or send no Pfin-Subject for your own)`)

export class Delegations {
  private readonly resolved = new Lru<string, Resolved>(10_000)

  constructor(
    private readonly control: ControlStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** The context a request runs under: `auth` itself without the header, else the delegated one (or 404). */
  resolve(auth: AuthContext, header: string | null): AuthContext {
    if (header === null || header === auth.principal.owner.id) return auth
    if (!isId('own', header)) throw noSubject()
    const now = this.now()
    const generation = this.control.commits.current(now)
    const slot = `${auth.principal.keyId}\n${header}`
    let cached = this.resolved.get(slot)
    if (!cached || cached.base !== auth || cached.readAt !== generation) {
      const found = this.control.grants.findUnrevoked(header, auth.principal.owner.id)
      if (!found) {
        this.resolved.delete(slot)
        throw noSubject()
      }
      const granted = found.grant.scopes as Scope[]
      const scopes = auth.principal.keyScopes.filter((scope) => granted.includes(scope))
      const context: AuthContext = {
        principal: { ...auth.principal, scopes },
        subject: found.subject,
        accessMode: 'delegated',
        grant: { id: found.grant.id, scopes: granted, expiresAt: found.grant.expiresAt },
      }
      cached = { base: auth, context, readAt: generation, expiresAt: found.grant.expiresAt }
      this.resolved.set(slot, cached)
    }
    if (cached.expiresAt !== null && cached.expiresAt <= now) {
      this.resolved.delete(slot)
      throw noSubject()
    }
    return cached.context
  }
}
