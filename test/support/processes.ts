import { Database } from 'bun:sqlite'
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * The server and the admin commands as an operator runs them: real processes started from the
 * checkout (`bun src/main.ts …`, `bun run start`), over a temporary DATA_DIR, on loopback only.
 * Everything started here is remembered, so a suite's afterAll can SIGKILL any straggler.
 */

export const ROOT = join(import.meta.dir, '..', '..')
export const MAIN = join(ROOT, 'src', 'main.ts')

/** The environment of a server or admin command over `dataDir`, with rate limits out of the way. */
export function processEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value
  return {
    ...env,
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    RATE_LIMIT_PER_MINUTE: '10000000',
    RATE_LIMIT_PER_DAY: '10000000',
    ANON_RATE_LIMIT_PER_MINUTE: '10000000',
    ANON_RATE_LIMIT_PER_DAY: '10000000',
    ...extra,
  }
}

const tempDirs: string[] = []
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  tempDirs.push(dir)
  return dir
}

type BunProc = ReturnType<typeof Bun.spawn>
const bunProcs = new Set<BunProc>()
const groups = new Set<number>()

/** SIGKILLs every process (and process group) started here that is still alive, then removes the temp dirs. */
export async function cleanup(): Promise<void> {
  for (const proc of bunProcs) {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
  }
  await Promise.all([...bunProcs].map((proc) => proc.exited.catch(() => {})))
  bunProcs.clear()
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL')
    } catch {}
  }
  groups.clear()
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

export interface AdminResult {
  args: string[]
  code: number
  stdout: string
  stderr: string
  /** The parsed `--json` output when the command succeeded with one JSON object, else null. */
  json: Record<string, unknown> | null
  startedAt: number
  /** When the process had exited (the moment its answer is "acknowledged"). */
  exitedAt: number
}

/** Runs `bun src/main.ts <args> --json` as its own process and waits for it. Never throws on failure. */
export async function admin(env: Record<string, string>, ...args: string[]): Promise<AdminResult> {
  const startedAt = Date.now()
  const proc = Bun.spawn(['bun', MAIN, ...args, '--json'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  bunProcs.add(proc)
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  const exitedAt = Date.now()
  bunProcs.delete(proc)
  let json: Record<string, unknown> | null = null
  if (code === 0) {
    try {
      const value = JSON.parse(stdout.trim())
      if (value && typeof value === 'object' && !Array.isArray(value)) json = value
    } catch {}
  }
  return { args, code, stdout, stderr, json, startedAt, exitedAt }
}

/** `admin`, but throws unless the command succeeded with a JSON object. */
export async function adminJson(env: Record<string, string>, ...args: string[]): Promise<Record<string, unknown>> {
  const result = await admin(env, ...args)
  if (!result.json) throw new Error(`pfin ${args.join(' ')} exited ${result.code}: ${result.stderr.trim()}`)
  return result.json
}

/** An owner made with the real CLI, and a key of its made the same way (the default scopes). */
export async function ownerWithKey(env: Record<string, string>, name: string): Promise<{ id: string; key: string }> {
  const id = (await adminJson(env, 'owner', 'create', '--name', name)).id as string
  const key = (await adminJson(env, 'key', 'create', '--owner', id)).key as string
  return { id, key }
}

export interface ServerProcess {
  proc: BunProc
  url: string
  /** Everything the server wrote on stderr so far. */
  stderr(): string
}

/** Reads a child's stdout until the listening line, then keeps draining it in the background. */
export async function awaitListening(stream: ReadableStream<Uint8Array>, timeoutMs: number): Promise<string> {
  const reader = stream.getReader()
  const decoder = new TextDecoder()
  let text = ''
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const { value, done } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
    const m = /pfin listening on (http:\/\/\S+)/.exec(text)
    if (m) {
      void (async () => {
        try {
          while (!(await reader.read()).done) {}
        } catch {}
      })()
      return m[1] as string
    }
  }
  throw new Error(`server did not print its listening line; stdout: ${text}`)
}

function collect(stream: ReadableStream<Uint8Array>): () => string {
  let text = ''
  const decoder = new TextDecoder()
  void (async () => {
    try {
      for await (const chunk of stream) text += decoder.decode(chunk, { stream: true })
    } catch {}
  })()
  return () => text
}

/** Starts `bun src/main.ts serve` and resolves once it prints `pfin listening on http://…`. */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const proc = Bun.spawn(['bun', MAIN, 'serve'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  bunProcs.add(proc)
  const stderr = collect(proc.stderr as ReadableStream<Uint8Array>)
  try {
    const url = await awaitListening(proc.stdout as ReadableStream<Uint8Array>, 15_000)
    return { proc, url, stderr }
  } catch (error) {
    proc.kill('SIGKILL')
    await proc.exited
    throw new Error(`${(error as Error).message}\nstderr: ${stderr()}`)
  }
}

/**
 * SIGKILLs the server at a random moment in the next few milliseconds, so that the kill lands
 * inside some request's write rather than between requests; `onKill` runs just before.
 */
export function killSoon(server: ServerProcess, onKill: () => void): void {
  const proc = server.proc
  setTimeout(() => {
    onKill()
    proc.kill('SIGKILL')
  }, Math.random() * 4)
}

export interface GroupServer {
  /** The `bun run start` wrapper: its pid is also the process group id. */
  child: ChildProcess
  pgid: number
  url: string
  stderr(): string
  /** Resolves with the wrapper's exit code and signal. */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/**
 * Starts the server as an operator's service manager does: `bun run start` (the package.json
 * script, so `bun run` is a wrapper that forwards signals to the real server), as the leader of
 * its own process group.
 */
export async function startGroupServer(env: Record<string, string>): Promise<GroupServer> {
  const child = spawn('bun', ['run', 'start'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  const pgid = child.pid
  if (pgid === undefined) throw new Error('bun run start did not start')
  groups.add(pgid)
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }))
  })
  let err = ''
  child.stderr?.setEncoding('utf8')
  child.stderr?.on('data', (chunk: string) => {
    err += chunk
  })
  let out = ''
  child.stdout?.setEncoding('utf8')
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bun run start did not listen; stdout: ${out} stderr: ${err}`)), 15_000)
    child.stdout?.on('data', (chunk: string) => {
      out += chunk
      const m = /pfin listening on (http:\/\/\S+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(m[1] as string)
      }
    })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`bun run start exited (${code ?? signal}) before listening; stderr: ${err}`))
    })
  })
  return { child, pgid, url, stderr: () => err, exit }
}

/** The pids of a process's children (Linux /proc). */
export function childPids(pid: number): number[] {
  const pids: number[] = []
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim()
      if (text) pids.push(...text.split(/\s+/).map(Number))
    }
  } catch {}
  return pids
}

/** Every process of a process group still alive (Linux /proc). */
export function groupMembers(pgid: number): number[] {
  const members: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // pid (comm) state ppid pgrp …; comm may contain spaces, so split after the last ')'
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(Number(entry))
    } catch {}
  }
  return members
}

/** Waits until no process of the group is alive; false if the deadline passed first. */
export async function groupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (groupMembers(pgid).length === 0) {
      groups.delete(pgid)
      return true
    }
    await Bun.sleep(5)
  }
  return false
}

export function withDb<T>(path: string, fn: (db: Database) => T, options: { readonly?: boolean; safeIntegers?: boolean } = {}): T {
  const db = new Database(path, { readonly: options.readonly, readwrite: !options.readonly, create: false, safeIntegers: options.safeIntegers })
  try {
    return fn(db)
  } finally {
    db.close()
  }
}

/** `PRAGMA integrity_check` of a database file ("ok" when sound), or the error opening it. */
export function integrity(path: string): string {
  try {
    return withDb(path, (db) => (db.query('PRAGMA integrity_check').all() as { integrity_check: string }[]).map((r) => r.integrity_check).join('; '), {
      readonly: true,
    })
  } catch (error) {
    return `cannot open: ${(error as Error).message}`
  }
}

export interface Answer {
  status: number
  text: string
  headers: Headers
}

/** One HTTP request; a network failure (refused, reset) is reported as status 0 with the error text. */
export async function call(
  url: string,
  method: string,
  path: string,
  opts: { key?: string; body?: string; idempotencyKey?: string; timeoutMs?: number } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {}
  if (opts.key) headers.authorization = `Bearer ${opts.key}`
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey
  try {
    const res = await fetch(url + path, { method, headers, body: opts.body, signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000) })
    return { status: res.status, text: await res.text(), headers: res.headers }
  } catch (error) {
    return { status: 0, text: String(error), headers: new Headers() }
  }
}

/** A JSON-RPC initialize, as a desktop agent opens `pfin mcp` with. */
export const BRIDGE_INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
}

/**
 * Runs `pfin mcp` (the stdio bridge) against a server: writes `lines` (one JSON-RPC message or
 * batch each) and closes its stdin; returns its exit code and the lines it wrote to stdout.
 */
export async function throughBridge(env: Record<string, string>, lines: string[]): Promise<{ code: number; lines: string[] }> {
  const bridge = Bun.spawn([process.execPath, MAIN, 'mcp'], { cwd: ROOT, env: { ...process.env, ...env }, stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
  for (const line of lines) bridge.stdin.write(`${line}\n`)
  bridge.stdin.end()
  const code = await bridge.exited
  const out = (await new Response(bridge.stdout).text()).trim()
  return { code, lines: out ? out.split('\n') : [] }
}
