import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/harness.ts'
import { throughBridge } from '../support/processes.ts'

/**
 * `pfin mcp`, the stdio bridge, answers each request of a batch line with a JSON-RPC error when
 * the server refuses the line (a bad key) or cannot be reached, so the agent is never left waiting.
 *
 * /mcp takes one JSON-RPC message or one batch per POST, and the bridge forwards a batch line as
 * it is. A refusal of the whole POST has no single `id` to answer: read off the array, it would
 * look like a notification and get no answer at all. CONTRACT §17: "A refused key, an unreachable
 * server or anything that is not pfin answering becomes a JSON-RPC error for that request (for
 * each request of a batch line)".
 */

setDefaultTimeout(30_000)

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server?.stop())

async function bridgeAnswers(url: string, key: string, lines: string[]): Promise<Record<string, unknown>[]> {
  const bridge = await throughBridge({ PFIN_URL: url, PFIN_API_KEY: key }, lines)
  expect(bridge.code).toBe(0)
  return bridge.lines.flatMap((line) => JSON.parse(line))
}

const BATCH = JSON.stringify([
  { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  { jsonrpc: '2.0', id: 2, method: 'ping' },
])

test('a batch line refused by the gate (bad key) gets a JSON-RPC error for each of its requests', async () => {
  const answers = await bridgeAnswers(server.url, 'pfk_wrong_key', [BATCH])
  // The failure this catches: [] (the refusal went to stderr only).
  expect(answers.map((answer) => answer.id).sort()).toEqual([1, 2])
  for (const answer of answers) expect(answer).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining('unauthorized') } })
})

test('a batch line sent to an unreachable server gets a JSON-RPC error for each of its requests', async () => {
  // A port nothing listens on: a server started and stopped.
  const gone = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
  const url = `http://127.0.0.1:${gone.port}`
  await gone.stop(true)
  const answers = await bridgeAnswers(url, 'pfk_any_key', [BATCH])
  // The failure this catches: [].
  expect(answers.map((answer) => answer.id).sort()).toEqual([1, 2])
  for (const answer of answers) expect(answer).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining('cannot be reached') } })
})
