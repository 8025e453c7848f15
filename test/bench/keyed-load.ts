import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type LoadResult, ROOT, settings, tempDir } from './support.ts'

/**
 * Load for write routes: every request carries its own `Idempotency-Key` (a stored key would
 * only be replayed, CONTRACT §8) and may vary its body with a per-request counter.
 * wrk builds each request in a Lua `request()` function; autocannon (BENCH_TOOL=autocannon)
 * in a `setupRequest` hook. Both count every response status, and the replays, themselves.
 */

export interface KeyedLoadOptions {
  url: string
  method?: 'POST' | 'PATCH'
  /** Sent on every request, besides `content-type: application/json` and the key. */
  headers: Record<string, string>
  /**
   * The JSON body, with tokens filled in per request: `{key}` is the request's Idempotency-Key
   * (unique), `{amount}` a money value between 1.00 and 997.99 that changes per request.
   */
  body: string
  /** Prefix of every `Idempotency-Key`: use a new one per run, or the keys repeat (replays). */
  keyPrefix: string
  connections: number
  /** Seconds. */
  duration: number
}

export interface KeyedLoadResult extends LoadResult {
  /** Responses by status code, as counted by the load generator's response hook. */
  statuses: Record<string, number>
  /** Responses with `Idempotent-Replayed: true`: nonzero means keys were not unique. */
  replayed: number
}

type Part = { text: string } | { token: 'key' | 'amount' }

function parts(body: string): Part[] {
  const out: Part[] = []
  let last = 0
  for (const match of body.matchAll(/\{(key|amount)\}/g)) {
    if (match.index > last) out.push({ text: body.slice(last, match.index) })
    out.push({ token: match[1] as 'key' | 'amount' })
    last = match.index + match[0].length
  }
  if (last < body.length) out.push({ text: body.slice(last) })
  return out
}

function luaString(text: string): string {
  let out = '"'
  for (const byte of new TextEncoder().encode(text)) {
    out += byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, '0')}`
  }
  return `${out}"`
}

const MARK = '@@pfin-keyed-load@@'

/** Drives `url` with unique keys until `duration` is over; exact counts, not samples. */
export async function keyedLoad(options: KeyedLoadOptions): Promise<KeyedLoadResult> {
  return settings.tool === 'wrk' ? await withWrk(options) : await withAutocannon(options)
}

/** The same load, unmeasured, for settings.warmup seconds (JIT, caches, file growth). */
export async function keyedWarm(options: KeyedLoadOptions): Promise<void> {
  if (settings.warmup > 0) await keyedLoad({ ...options, keyPrefix: `${options.keyPrefix}warm-`, duration: settings.warmup })
}

async function output(cmd: string[]): Promise<string> {
  const proc = Bun.spawn(cmd, { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${cmd[0]} exited ${code}: ${stderr}`)
  return stdout
}

function finish(
  tool: string,
  r: { requests: number; seconds: number; p50: number; p99: number; mean: number; errors: number; statuses: Record<string, number>; replayed: number },
): KeyedLoadResult {
  let non2xx = 0
  for (const [status, count] of Object.entries(r.statuses)) if (!(Number(status) >= 200 && Number(status) < 300)) non2xx += count
  return {
    tool,
    requests: r.requests,
    seconds: r.seconds,
    rps: r.requests / r.seconds,
    latencyMs: { p50: r.p50, p99: r.p99, mean: r.mean },
    non2xx,
    errors: r.errors,
    statuses: r.statuses,
    replayed: r.replayed,
  }
}

async function withWrk(o: KeyedLoadOptions): Promise<KeyedLoadResult> {
  const url = new URL(o.url)
  const headers = { ...o.headers, 'content-type': 'application/json' }
  const bodyExpr =
    parts(o.body)
      .map((p) => ('text' in p ? luaString(p.text) : p.token === 'key' ? 'key' : 'string.format("%d.%02d", 1 + n % 997, n % 100)'))
      .join(' .. ') || '""'
  const lines = [
    // setup() runs in the main Lua state, once per wrk thread; each thread has its own state.
    'local threads = {}',
    'function setup(thread)',
    '  table.insert(threads, thread)',
    '  thread:set("tid", #threads)',
    'end',
    'local n = 0',
    'statuses = {}',
    'replayed = 0',
    `local method = ${luaString(o.method ?? 'POST')}`,
    `local path = ${luaString(url.pathname + url.search)}`,
    `local prefix = ${luaString(o.keyPrefix)}`,
    'local headers = {}',
    ...Object.entries(headers).map(([name, value]) => `headers[${luaString(name)}] = ${luaString(value)}`),
    'function request()',
    '  n = n + 1',
    '  local key = prefix .. tid .. "-" .. n',
    '  headers["idempotency-key"] = key',
    `  return wrk.format(method, path, headers, ${bodyExpr})`,
    'end',
    'function response(status, hdrs, body)',
    '  statuses[status] = (statuses[status] or 0) + 1',
    '  if hdrs["idempotent-replayed"] or hdrs["Idempotent-Replayed"] then replayed = replayed + 1 end',
    'end',
    'function done(summary, latency, requests)',
    '  local all, replays = {}, 0',
    '  for _, thread in ipairs(threads) do',
    '    for status, count in pairs(thread:get("statuses")) do all[status] = (all[status] or 0) + count end',
    '    replays = replays + thread:get("replayed")',
    '  end',
    '  local parts = {}',
    '  for status, count in pairs(all) do table.insert(parts, string.format("\\"%d\\":%d", status, count)) end',
    '  local e = summary.errors',
    `  io.write(string.format("${MARK}{\\"requests\\":%d,\\"duration_us\\":%d,\\"p50\\":%d,\\"p99\\":%d,\\"mean\\":%f,\\"errors\\":%d,\\"replayed\\":%d,\\"statuses\\":{%s}}\\n",`,
    '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.mean,',
    '    e.connect + e.read + e.write + e.timeout, replays, table.concat(parts, ",")))',
    'end',
  ]
  const dir = tempDir('pfin-wrk-')
  try {
    const script = join(dir, 'keyed.lua')
    writeFileSync(script, `${lines.join('\n')}\n`)
    const connections = Math.max(1, o.connections)
    const tool = `wrk -t1 -c${connections} -d${o.duration}s`
    const stdout = await output(['wrk', '-t1', `-c${connections}`, `-d${o.duration}s`, '-s', script, o.url])
    const json = stdout.split('\n').find((line) => line.startsWith(MARK))
    if (!json) throw new Error(`wrk printed no summary:\n${stdout}`)
    const r = JSON.parse(json.slice(MARK.length))
    return finish(tool, {
      requests: r.requests,
      seconds: r.duration_us / 1e6,
      p50: r.p50 / 1000,
      p99: r.p99 / 1000,
      mean: r.mean / 1000,
      errors: r.errors,
      statuses: r.statuses,
      replayed: r.replayed,
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function withAutocannon(o: KeyedLoadOptions): Promise<KeyedLoadResult> {
  // A small CommonJS driver in its own process (node when installed), like support.ts does.
  const driver = `
const autocannon = require(${JSON.stringify(join(ROOT, 'node_modules', 'autocannon'))})
const o = ${JSON.stringify({ ...o, parts: parts(o.body) })}
let n = 0
let replayed = 0
const statuses = {}
const amount = (n) => (1 + (n % 997)) + '.' + String(n % 100).padStart(2, '0')
autocannon({
  url: o.url,
  connections: Math.max(1, o.connections),
  duration: o.duration,
  requests: [{
    method: o.method || 'POST',
    setupRequest(req) {
      n += 1
      const key = o.keyPrefix + n
      req.headers = Object.assign({}, o.headers, { 'content-type': 'application/json', 'idempotency-key': key })
      req.body = o.parts.map((p) => p.text !== undefined ? p.text : p.token === 'key' ? key : amount(n)).join('')
      return req
    },
    onResponse(status, body, context, headers) {
      statuses[status] = (statuses[status] || 0) + 1
      if (headers && (headers['idempotent-replayed'] || headers['Idempotent-Replayed'])) replayed += 1
    },
  }],
}, (error, r) => {
  if (error) { console.error(String(error)); process.exit(1) }
  process.stdout.write(JSON.stringify({ requests: r.requests.total, seconds: r.duration, p50: r.latency.p50, p99: r.latency.p99, mean: r.latency.average, errors: r.errors + r.timeouts, statuses, replayed }) + '\\n')
})
`
  const dir = tempDir('pfin-autocannon-')
  try {
    const script = join(dir, 'keyed.cjs')
    writeFileSync(script, driver)
    const runtime = Bun.which('node') ?? 'bun'
    const r = JSON.parse(await output([runtime, script]))
    return finish(`autocannon -c ${o.connections} -d ${o.duration} (${runtime === 'bun' ? 'bun' : 'node'}, setupRequest)`, r)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** One aligned line per keyed load result, with its status counts. */
export function describeKeyed(label: string, r: KeyedLoadResult): string {
  const statuses = Object.entries(r.statuses)
    .map(([status, count]) => `${status}×${count}`)
    .join(' ')
  const health = r.non2xx || r.errors || r.replayed ? `  !! ${r.non2xx} non-2xx, ${r.errors} socket errors, ${r.replayed} replays` : ''
  return `${label.padEnd(34)} ${`${Math.round(r.rps).toLocaleString('en-US')} req/s`.padStart(12)}   p50 ${`${r.latencyMs.p50.toFixed(2)} ms`.padStart(9)}   p99 ${`${r.latencyMs.p99.toFixed(2)} ms`.padStart(9)}   [${statuses}]${health}`
}

let postSeq = 0

/** One POST with a fresh Idempotency-Key; throws unless the answer is 2xx. Returns `data`. */
// biome-ignore lint/suspicious/noExplicitAny: fixtures read the API's JSON freely
export async function postOnce(baseUrl: string, apiKey: string, path: string, body: unknown): Promise<any> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': `bench-fixture-${process.pid}-${++postSeq}` },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  if (response.status < 200 || response.status > 299) throw new Error(`POST ${path} answered ${response.status}: ${text}`)
  return JSON.parse(text).data
}

/** One GET; throws unless the answer is 200. Returns the whole JSON body. */
// biome-ignore lint/suspicious/noExplicitAny: fixtures read the API's JSON freely
export async function getOnce(baseUrl: string, apiKey: string, path: string): Promise<any> {
  const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${apiKey}` } })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${text}`)
  return JSON.parse(text)
}
