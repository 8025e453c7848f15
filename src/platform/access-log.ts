/**
 * One line per request (time, request id, method, route pattern, status, duration, owner id),
 * as JSON for log collectors or as a short readable line on a terminal. Never a key, a body
 * or a query value: the route is the pattern (`/v1/accounts/:accountId`), not the path.
 *
 * Lines are buffered and written a few times a second, so logging costs no system call per
 * request; `close()` writes what is left (at shutdown).
 */
export type LogFormat = 'json' | 'pretty' | 'off'

export interface AccessEntry {
  requestId: string
  method: string
  /** The route pattern, or null for a request that matched no route. */
  route: string | null
  status: number
  startedAt: number
  ownerId: string | null
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

  record(entry: AccessEntry): void {
    const now = Date.now()
    const duration = Math.round((performance.now() - entry.startedAt) * 100) / 100
    const time = this.iso(now)
    // Every value is ours or a sane token (request ids are checked, methods are from the route
    // table or Bun's parser); JSON.stringify only where a value could need escaping.
    this.buffer.push(
      this.format === 'json'
        ? `{"time":"${time}","request_id":"${entry.requestId}","method":${JSON.stringify(entry.method)},"route":${JSON.stringify(entry.route)},"status":${entry.status},"duration_ms":${duration},"owner_id":${entry.ownerId === null ? 'null' : `"${entry.ownerId}"`}}\n`
        : `${time} ${entry.status} ${entry.method} ${entry.route ?? '(no route)'} ${duration}ms ${entry.ownerId ?? '-'} ${entry.requestId}\n`,
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
