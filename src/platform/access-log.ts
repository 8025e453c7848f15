/**
 * One line per request (time, request id, method, route pattern, status, duration, owner id,
 * client address), as JSON for log collectors or as a short readable line on a terminal. Never
 * a key, a body or a query value: the route is the pattern (`/v1/accounts/:accountId`), not the
 * path. The client address is the one the rate limits use: behind a trusted proxy, the client
 * its forwarding header names (CONTRACT §25).
 *
 * Lines are buffered and written a few times a second, so logging costs no system call per
 * request; `close()` writes what is left (at shutdown).
 */
export type LogFormat = 'json' | 'pretty' | 'off'

/** What the log reads of a request's state: its id, the route pattern that matched, the caller, the start. */
export interface LoggedRequest {
  requestId: string
  /** The route pattern, absent for a request that matched no route. */
  route?: string
  startedAt: number
  auth?: { subject: { id: string } }
  /** The client address (an IP address as Bun or a trusted proxy's header gives it, or `local`). */
  readonly ip: string
}

const FLUSH_MS = 250
const MAX_BUFFERED = 512

export class AccessLog {
  private buffer: string[] = []
  private readonly timer: ReturnType<typeof setInterval>
  private isoSecond = -1
  private isoPrefix = ''

  constructor(
    private readonly format: 'json' | 'pretty',
    private readonly write: (text: string) => void = (text) => void process.stdout.write(text),
  ) {
    this.timer = setInterval(() => this.flush(), FLUSH_MS)
    this.timer.unref()
  }

  /** One line for a finished request; `requestId` differs from the state's only on a replay (the original's id). */
  record(state: LoggedRequest, method: string, status: number, requestId = state.requestId): void {
    const now = Date.now()
    const duration = Math.round((performance.now() - state.startedAt) * 100) / 100
    const time = this.iso(now)
    const route = state.route ?? null
    const ownerId = state.auth?.subject.id ?? null
    const client = state.ip
    // Every value is ours or a sane token (request ids are checked, methods are from the route
    // table or Bun's parser); JSON.stringify only where a value could need escaping.
    this.buffer.push(
      this.format === 'json'
        ? `{"time":"${time}","request_id":"${requestId}","method":${JSON.stringify(method)},"route":${JSON.stringify(route)},"status":${status},"duration_ms":${duration},"owner_id":${ownerId === null ? 'null' : `"${ownerId}"`},"client_ip":${JSON.stringify(client)}}\n`
        : `${time} ${status} ${method} ${route ?? '(no route)'} ${duration}ms ${ownerId ?? '-'} ${client} ${requestId}\n`,
    )
    if (this.buffer.length >= MAX_BUFFERED) this.flush()
  }

  flush(): void {
    if (this.buffer.length === 0) return
    const text = this.buffer.join('')
    this.buffer = []
    this.write(text)
  }

  close(): void {
    clearInterval(this.timer)
    this.flush()
  }

  /** ISO time, the part up to the second made once per second. */
  private iso(now: number): string {
    const second = Math.floor(now / 1000)
    if (second !== this.isoSecond) {
      this.isoSecond = second
      this.isoPrefix = new Date(second * 1000).toISOString().slice(0, 19)
    }
    return `${this.isoPrefix}.${String(now % 1000).padStart(3, '0')}Z`
  }
}
