import { createHmac, timingSafeEqual } from 'node:crypto'
import type { OAuthToken } from '../../db/control/oauth-store.ts'
import { tokenHash } from '../../platform/auth.ts'

/**
 * Secrets of the OAuth flow (CONTRACT §28): codes and tokens are 256 random bits, shown once
 * and kept as SHA-256; a pending sign-in travels in the page as a request signed with a key
 * held in memory (a restart voids sign-ins in progress, nothing else).
 */

export const ACCESS_TOKEN_TTL_MS = 60 * 60_000
export const REFRESH_TOKEN_TTL_MS = 30 * 86_400_000
export const CODE_TTL_MS = 60_000
/** How long a sign-in page may be left open before its form is refused. */
export const REQUEST_TTL_MS = 15 * 60_000
export const INVITE_TTL_MS = 24 * 60 * 60_000

const randomSecret = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')

/**
 * `pfa_<ownerId>_<grantId>_<secret>` and `pfr_<ownerId>_<grantId>_<secret>`: the owner and the grant
 * in the clear, so a log line can tell whose it is and a router where it goes (CONTRACT §31).
 */
export function mintTokens(ownerId: string, grantId: string, now: number): { access: string; refresh: string; rows: OAuthToken[] } {
  const access = `pfa_${ownerId}_${grantId}_${randomSecret()}`
  const refresh = `pfr_${ownerId}_${grantId}_${randomSecret()}`
  return {
    access,
    refresh,
    rows: [
      { tokenHash: tokenHash(access), grantId, kind: 'access', createdAt: now, expiresAt: now + ACCESS_TOKEN_TTL_MS, usedAt: null },
      { tokenHash: tokenHash(refresh), grantId, kind: 'refresh', createdAt: now, expiresAt: now + REFRESH_TOKEN_TTL_MS, usedAt: null },
    ],
  }
}

export const mintCode = () => `pfc_${randomSecret()}`
export const mintInvite = () => `pfi_${randomSecret()}`
export const mintCsrf = () => randomSecret()

/** RFC 7636 §4.1: 43–128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/
/** An S256 challenge: the base64url SHA-256 of a verifier, 43 characters. */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/

export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier)) return false
  const computed = Buffer.from(new Bun.CryptoHasher('sha256').update(verifier).digest())
  const expected = Buffer.from(challenge, 'base64url')
  return expected.length === computed.length && timingSafeEqual(computed, expected)
}

/** A pending authorization request, as the sign-in page carries it. */
export interface PendingRequest {
  clientId: string
  redirectUri: string
  codeChallenge: string
  state: string | null
  scopes: string[]
  expiresAt: number
}

export class RequestSigner {
  private readonly key = crypto.getRandomValues(new Uint8Array(32))

  private mac(text: string): Buffer {
    return createHmac('sha256', this.key).update(text).digest()
  }

  sign(request: PendingRequest): string {
    const body = Buffer.from(JSON.stringify(request)).toString('base64url')
    return `${body}.${this.mac(body).toString('base64url')}`
  }

  /** The request, if this process signed it and it has not expired. */
  open(handle: string, now: number): PendingRequest | null {
    const dot = handle.indexOf('.')
    if (dot < 0 || handle.length > 8192) return null
    const body = handle.slice(0, dot)
    const given = Buffer.from(handle.slice(dot + 1), 'base64url')
    const expected = this.mac(body)
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null
    const request = JSON.parse(Buffer.from(body, 'base64url').toString()) as PendingRequest
    return request.expiresAt > now ? request : null
  }
}
