/**
 * Brute force on sign-in (CONTRACT §28): failed attempts are counted per login name (whether
 * or not an owner has it, so a lock says nothing about which names exist) and per client
 * address. Past the limit the name, or the address, is locked for a while, and a locked attempt
 * is refused without checking the password, so a guesser learns nothing more while it lasts.
 *
 * Counts are kept in memory: a restart forgets them (a guesser cannot restart the server).
 */

/** Failures within one window that lock a login name; an owner under attack waits this long at most. */
export const LOGIN_FAILURES = 10
/** Failures within one window that lock a client address (a shared NAT gets twice the room). */
export const ADDRESS_FAILURES = 20
export const WINDOW_MS = 15 * 60_000
/** Counters kept at most; the oldest go first (a flood of made-up names cannot grow memory). */
const MAX_ENTRIES = 100_000

interface Count {
  failures: number
  windowStart: number
  lockedUntil: number
}

class Counts {
  private readonly map = new Map<string, Count>()

  lockedFor(key: string, now: number): number {
    const count = this.map.get(key)
    return count && count.lockedUntil > now ? count.lockedUntil - now : 0
  }

  fail(key: string, limit: number, now: number): void {
    let count = this.map.get(key)
    if (!count || now - count.windowStart >= WINDOW_MS) count = { failures: 0, windowStart: now, lockedUntil: 0 }
    count.failures += 1
    if (count.failures >= limit) count.lockedUntil = now + WINDOW_MS
    this.map.delete(key)
    this.map.set(key, count)
    if (this.map.size > MAX_ENTRIES) this.map.delete(this.map.keys().next().value as string)
  }

  clear(key: string): void {
    this.map.delete(key)
  }
}

export class SignInGuard {
  private readonly logins = new Counts()
  private readonly addresses = new Counts()

  constructor(private readonly now: () => number = Date.now) {}

  /** How long this attempt must wait (ms), 0 when it may be checked. */
  lockedFor(login: string, address: string): number {
    const now = this.now()
    return Math.max(this.logins.lockedFor(login, now), this.addresses.lockedFor(address, now))
  }

  fail(login: string, address: string): void {
    const now = this.now()
    this.logins.fail(login, LOGIN_FAILURES, now)
    this.addresses.fail(address, ADDRESS_FAILURES, now)
  }

  /** A correct password clears its name's count; the address keeps its own (one success must not reset a guesser's). */
  succeed(login: string): void {
    this.logins.clear(login)
  }
}
