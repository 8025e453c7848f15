import { afterAll, expect, test } from 'bun:test'
import { cleanup, processEnv, startServer, tempDir, ownerWithKey } from '../support/processes.ts'

/**
 * Each JSON-RPC request in a batch sent to POST /mcp counts once against the key's rate limit:
 * a batch larger than what is left is refused whole, one that fits runs.
 *
 * CONTRACT §17: MCP uses "the same rate limits (each JSON-RPC request counts once)". Counted per
 * POST, one batch of 20 `tools/call` messages would run 20 writes against
 * RATE_LIMIT_PER_MINUTE=5, and a 4 MiB body can carry thousands: the per-minute and per-day
 * limits would brake only the clients that do not batch.
 */

afterAll(cleanup)

type Message = { id?: number; result?: { structuredContent?: { operation?: string } } }

/** The JSON-RPC answers of a response, whether sent as JSON or as an event stream. */
async function answers(res: Response): Promise<Message[]> {
  const text = await res.text()
  const values = res.headers.get('content-type')?.includes('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => JSON.parse(line.slice(5)))
    : [JSON.parse(text)]
  return values.flat() as Message[]
}

const upsert = (i: number) => ({
  jsonrpc: '2.0',
  id: i + 1,
  method: 'tools/call',
  params: { name: 'upsert_account', arguments: { externalId: `acct-${i}`, name: `Account ${i}`, type: 'bank', balance: i, currency: 'EUR' } },
})

test('each JSON-RPC request of a batch counts once: a batch larger than what is left is refused whole, one that fits runs', async () => {
  const env = processEnv(tempDir('pfin-mcpbatch-'), { LOG_FORMAT: 'off', RATE_LIMIT_PER_MINUTE: '5' })
  const { key } = await ownerWithKey(env, 'Batcher')
  const server = await startServer(env)
  const post = (body: unknown) =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(body),
    })
  try {
    // Twenty requests against five a minute: none of them runs.
    const tooMany = await post(Array.from({ length: 20 }, (_, i) => upsert(i)))
    expect(tooMany.status).toBe(429)
    expect(tooMany.headers.get('content-type')).toStartWith('application/problem+json')
    expect(((await tooMany.json()) as { code: string }).code).toBe('rate_limit_exceeded')
    expect(Number(tooMany.headers.get('retry-after'))).toBeGreaterThan(0)
    // The refused POST itself was counted; nothing of its batch was.
    expect(tooMany.headers.get('x-ratelimit-remaining-minute')).toBe('4')

    const fits = await post(Array.from({ length: 4 }, (_, i) => upsert(100 + i)))
    expect(fits.status).toBe(200)
    const results = (await answers(fits)).sort((a, b) => (a.id ?? 0) - (b.id ?? 0))
    expect(results.map((r) => r.result?.structuredContent?.operation)).toEqual(['created', 'created', 'created', 'created'])
    expect(fits.headers.get('x-ratelimit-remaining-minute')).toBe('0')

    // Only the four ran: the twenty-batch's accounts do not exist.
    const list = await fetch(`${server.url}/v1/accounts?limit=100`, { headers: { authorization: `Bearer ${key}` } })
    expect(list.status).toBe(429)
  } finally {
    server.proc.kill('SIGTERM')
    await server.proc.exited
  }
}, 30_000)
