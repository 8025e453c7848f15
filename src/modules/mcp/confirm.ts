import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * Confirm tokens for an agent's destructive or bulk calls (CONTRACT §17): the first call returns
 * a plan and a token; only a second call with the token acts. The token names the owner, the
 * tool, the target and the target's version (its latest change in the feed), so it is void once
 * the target changed; it expires after five minutes. The key is this process's own: a restart
 * voids outstanding tokens, which only costs the agent one more plan.
 */
const SECRET = crypto.getRandomValues(new Uint8Array(32))
export const CONFIRM_TTL_MS = 5 * 60_000

function sign(parts: string[]): string {
  return createHmac('sha256', SECRET).update(parts.join('\n')).digest('base64url').slice(0, 32)
}

export function issueConfirmToken(
  ownerId: string,
  tool: string,
  target: string,
  version: string,
  now = Date.now(),
): { confirmToken: string; expiresAt: number } {
  const expiresAt = now + CONFIRM_TTL_MS
  return { confirmToken: `cfm_${expiresAt.toString(36)}_${sign([ownerId, tool, target, version, String(expiresAt)])}`, expiresAt }
}

export type ConfirmCheck = 'ok' | 'expired' | 'stale'

/** `stale`: not a token for this owner, tool and target as it is now (it changed, or the token was made for something else). */
export function checkConfirmToken(token: string, ownerId: string, tool: string, target: string, version: string, now = Date.now()): ConfirmCheck {
  const match = /^cfm_([0-9a-z]{1,12})_([A-Za-z0-9_-]{32})$/.exec(token)
  if (!match) return 'stale'
  const expiresAt = Number.parseInt(match[1] as string, 36)
  const expected = Buffer.from(sign([ownerId, tool, target, version, String(expiresAt)]))
  const given = Buffer.from(match[2] as string)
  if (!timingSafeEqual(expected, given)) return 'stale'
  return expiresAt < now ? 'expired' : 'ok'
}
