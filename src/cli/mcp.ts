import { decodeJsonVerbatim } from '../platform/json.ts'
import { UsageError } from './args.ts'
import { adminCommand } from './invocation.ts'
import type { CommandSpec } from './spec.ts'

export const mcpSpec: CommandSpec = {
  name: 'mcp',
  summary: 'MCP over stdio for desktop agents: forwards each message to PFIN_URL/mcp with the key in PFIN_API_KEY',
  usage: '',
  flags: [],
  example: 'mcp',
  dataDir: 'none',
  json: false,
  notes:
    'Environment: PFIN_API_KEY (required: the key the agent may use), PFIN_URL (default http://127.0.0.1:3000),\n' +
    "PFIN_SUBJECT (optional: another owner's id, to act on the ledger that owner shared with the key's owner).\n" +
    'Reads one JSON-RPC message per line on stdin and writes the answers on stdout; logs go to stderr.',
  run: () => mcpBridge(),
}

/**
 * `pfin mcp`: a stdio bridge for desktop agents (CONTRACT §17). It reads MCP messages from
 * stdin, one JSON-RPC message per line, forwards each to `PFIN_URL/mcp` with the key in
 * `PFIN_API_KEY`, and writes the answers to stdout, one per line. It keeps no state of its own
 * but the protocol version the server agreed on, which later requests carry as a header.
 * Logs go to stderr: stdout belongs to the protocol.
 */
export async function mcpBridge(env: Record<string, string | undefined> = process.env): Promise<number> {
  const key = env.PFIN_API_KEY?.trim()
  if (!key) throw new UsageError(`PFIN_API_KEY must hold the API key the agent may use (make one: ${adminCommand()} key create --owner OWNER_ID)`)
  let endpoint: URL
  try {
    // The server's base URL, kept with its path (a reverse proxy may serve pfin under /pfin); its /mcp given whole works too.
    endpoint = new URL(env.PFIN_URL?.trim() || 'http://127.0.0.1:3000')
    endpoint.pathname = `${endpoint.pathname.replace(/\/+$/, '').replace(/\/mcp$/, '')}/mcp`
    endpoint.search = ''
    endpoint.hash = ''
  } catch {
    throw new UsageError(`PFIN_URL must be the server's URL, such as http://127.0.0.1:3000 (got "${env.PFIN_URL}")`)
  }
  // Households (CONTRACT §30): the ledger the agent acts on, when not the key owner's own.
  const subject = env.PFIN_SUBJECT?.trim() || null
  const bridge = new Bridge(endpoint, key, subject)
  const pending = new Set<Promise<void>>()
  let buffered = ''
  const decoder = new TextDecoder()
  for await (const chunk of Bun.stdin.stream()) {
    buffered += decoder.decode(chunk, { stream: true })
    let newline = buffered.indexOf('\n')
    while (newline >= 0) {
      const line = buffered.slice(0, newline).trim()
      buffered = buffered.slice(newline + 1)
      if (line) {
        const task = bridge.forward(line).finally(() => pending.delete(task))
        pending.add(task)
      }
      newline = buffered.indexOf('\n')
    }
  }
  await Promise.all(pending)
  return 0
}

type Message = { jsonrpc?: string; id?: string | number | null; method?: string; result?: { protocolVersion?: unknown } }

class Bridge {
  private protocolVersion: string | undefined

  constructor(
    private readonly endpoint: URL,
    private readonly key: string,
    private readonly subject: string | null = null,
  ) {}

  async forward(line: string): Promise<void> {
    let message: Message | Message[]
    try {
      message = JSON.parse(line) as Message | Message[]
    } catch {
      this.write({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: a line on stdin is not JSON' } })
      return
    }
    if (typeof message !== 'object' || message === null) {
      this.write({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: a line on stdin is JSON but not a JSON-RPC message' } })
      return
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    }
    if (this.protocolVersion) headers['mcp-protocol-version'] = this.protocolVersion
    if (this.subject) headers['pfin-subject'] = this.subject
    let response: Response
    try {
      response = await fetch(this.endpoint, { method: 'POST', headers, body: line })
    } catch (error) {
      this.fail(message, -32000, `pfin at ${this.endpoint.origin} cannot be reached: ${error instanceof Error ? error.message : String(error)}`)
      return
    }
    const type = response.headers.get('content-type') ?? ''
    const text = await response.text()
    if (type.startsWith('application/problem+json')) {
      // The gate refused the request (key, rate limit, tier, Origin): an error for this request.
      const problem = safeParse(text) as { code?: string; detail?: string } | undefined
      this.fail(message, -32000, problem ? `${problem.code}: ${problem.detail}` : `HTTP ${response.status}`)
      return
    }
    const answers = type.startsWith('text/event-stream') ? eventData(text) : text.trim() ? [text] : []
    let answered = false
    for (const answer of answers) {
      const parsed = parseAnswer(answer) as Message | Message[] | undefined
      if (parsed === undefined) continue
      for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
        const version = item.result?.protocolVersion
        if (typeof version === 'string') this.protocolVersion = version
        this.write(item)
        answered = true
      }
    }
    // Something else answered (a proxy's error page, a wrong PFIN_URL): the agent must not wait forever.
    if (!answered && (requestIds(message).length > 0 || !response.ok)) {
      this.fail(message, -32000, `${this.endpoint.href} answered HTTP ${response.status} without an MCP message; is PFIN_URL the pfin server?`)
    }
  }

  /** An error for each request of the line (one message or a batch); notifications get none, so it goes to stderr. */
  private fail(message: Message | Message[], code: number, text: string): void {
    const ids = requestIds(message)
    if (ids.length === 0) {
      console.error(`pfin mcp: ${text}`)
      return
    }
    for (const id of ids) this.write({ jsonrpc: '2.0', id, error: { code, message: text } })
  }

  private write(message: unknown): void {
    process.stdout.write(`${JSON.stringify(message)}\n`)
  }
}

/** The ids of the requests in a line: one message, or each of a batch's (a notification has none). */
function requestIds(message: Message | Message[]): Message['id'][] {
  return (Array.isArray(message) ? message : [message]).flatMap((item) => (typeof item === 'object' && item !== null && item.id !== undefined ? [item.id] : []))
}

/**
 * An answer as the server wrote it: its numbers are written out again verbatim (an 18-digit
 * balance would not survive a double), else, for what the server would never send, as parsed.
 */
function parseAnswer(text: string): unknown {
  try {
    return decodeJsonVerbatim(text)
  } catch {
    return safeParse(text)
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The `data:` payloads of a server-sent event stream, one per event. */
function eventData(stream: string): string[] {
  return stream
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n'),
    )
    .filter(Boolean)
}
