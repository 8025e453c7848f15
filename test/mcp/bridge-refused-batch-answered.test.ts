import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import { startTestServer, type TestServer } from '../support/harness.ts'

/**
 * Campaign 5 finding (2026-11-26): `pfin mcp`, the stdio bridge, answers a refused request with
 * a JSON-RPC error only when the line is a single message. /mcp takes "one JSON-RPC message (or
 * one batch)" per POST (README "Agents (MCP)"), and the bridge forwards a batch line as it is;
 * but when the gate refuses it (a bad key: 401 problem+json) or the server cannot be reached,
 * the bridge reads the request's `id` off the array — undefined — takes the batch for a
 * notification, and writes nothing to stdout (only a line on stderr). The agent waits forever
 * for the answers to its requests.
 *
 * README "Desktop agents: `pfin mcp`": "A refused key, an unreachable server or anything that
 * is not pfin answering becomes a JSON-RPC error for that request; the bridge keeps running until
 * stdin closes."
 *
 * Before a fix: stdout is empty for the batch line `[{id: 1, tools/list}, {id: 2, ping}]`.
 */

setDefaultTimeout(30_000)
const ROOT = join(import.meta.dir, '../..')

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server?.stop())

async function bridgeAnswers(url: string, key: string, lines: string[]): Promise<Record<string, unknown>[]> {
  const bridge = Bun.spawn([process.execPath, 'src/main.ts', 'mcp'], {
    cwd: ROOT,
    env: { ...process.env, PFIN_URL: url, PFIN_API_KEY: key },
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  for (const line of lines) bridge.stdin.write(`${line}\n`)
  bridge.stdin.end()
  expect(await bridge.exited).toBe(0)
  const out = (await new Response(bridge.stdout).text()).trim()
  return out ? out.split('\n').flatMap((line) => JSON.parse(line)) : []
}

const BATCH = JSON.stringify([
  { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  { jsonrpc: '2.0', id: 2, method: 'ping' },
])

test('a batch line refused by the gate (bad key) gets a JSON-RPC error for each of its requests', async () => {
  const answers = await bridgeAnswers(server.url, 'pfk_wrong_key', [BATCH])
  // Before the fix: [] (the refusal went to stderr only).
  expect(answers.map((answer) => answer.id).sort()).toEqual([1, 2])
  for (const answer of answers) expect(answer).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining('unauthorized') } })
})

test('a batch line sent to an unreachable server gets a JSON-RPC error for each of its requests', async () => {
  // A port nothing listens on: a server started and stopped.
  const gone = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
  const url = `http://127.0.0.1:${gone.port}`
  await gone.stop(true)
  const answers = await bridgeAnswers(url, 'pfk_any_key', [BATCH])
  // Before the fix: [].
  expect(answers.map((answer) => answer.id).sort()).toEqual([1, 2])
  for (const answer of answers) expect(answer).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining('cannot be reached') } })
})
