import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { tempDir } from '../support/harness.ts'

/**
 * The README's shell examples run as written (issue 10 §4). Every ```sh and ```bash block of
 * README.md is run, in order, in ONE bash process (so variables such as $OWNER, $KEY and
 * $CHECKING carry from block to block, as in a reader's terminal), against a real server
 * (`bun src/main.ts serve`, a separate process) over a temporary DATA_DIR. The only change made
 * to the text: the server listens on a free port and `localhost:3000` becomes `localhost:<port>`
 * (port 3000 may be taken by the reader's own pfin). `bun run admin` runs the real CLI, from a
 * scratch directory that links package.json, src/ and node_modules/ of this checkout, so files
 * the examples write (`owner export --out …`) land there.
 *
 * A block is skipped only when the line before its fence says why:
 * `<!-- not run: needs systemd -->`. Every command must exit 0 (`set -e`, pipefail), every HTTP
 * answer the examples get must be below 400, and what the text promises (201 then 200, the
 * dry-run report, …) is checked below.
 */

const root = join(import.meta.dir, '..', '..')
const readme = readFileSync(join(root, 'README.md'), 'utf8')

interface Block {
  /** 1-based line of the opening fence in README.md. */
  line: number
  section: string
  code: string
  /** The reason from `<!-- not run: … -->`, or null when the block runs. */
  notRun: string | null
}

/** The ```sh / ```bash blocks, with their section and any `not run` marker on the line before. */
function shellBlocks(text: string): Block[] {
  const lines = text.split('\n')
  const blocks: Block[] = []
  let section = ''
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    const heading = /^(#{2,3}) (.+)$/.exec(line)
    if (heading) section = heading[2] as string
    const fence = /^(\s*)(`{3,})(\S*)\s*$/.exec(line)
    if (!fence) continue
    const [, indent = '', ticks = '', lang = ''] = fence
    const body: string[] = []
    let j = i + 1
    while (j < lines.length && !new RegExp(`^\\s*${ticks}\\s*$`).test(lines[j] as string)) {
      const codeLine = lines[j] as string
      body.push(codeLine.startsWith(indent) ? codeLine.slice(indent.length) : codeLine.trimStart())
      j++
    }
    if (lang === 'sh' || lang === 'bash') {
      let k = i - 1
      while (k >= 0 && (lines[k] as string).trim() === '') k--
      const marker = /^\s*<!--\s*not run:\s*(.+?)\s*-->\s*$/.exec(lines[k] ?? '')
      blocks.push({ line: i + 1, section, code: `${body.join('\n')}\n`, notRun: marker ? (marker[1] as string) : null })
    }
    i = j
  }
  return blocks
}

const blocks = shellBlocks(readme)
const runnable = blocks.filter((block) => block.notRun === null)

// The examples are bash with curl; a machine without them cannot run what a reader would.
const missing = ['bash', 'curl'].filter((tool) => !Bun.which(tool))
if (missing.length > 0) console.warn(`SKIPPED README examples: ${missing.join(' and ')} not found (apt-get install -y ${missing.join(' ')})`)

interface Call {
  block: number
  status: number
  args: string
}

interface Run {
  code: number
  stderr: string
  /** stdout of each runnable block, by index into `runnable`. */
  out: string[]
  calls: Call[]
  work: string
}

let run: Run
let server: ReturnType<typeof Bun.spawn> | undefined
const dirs: string[] = []

afterAll(async () => {
  server?.kill('SIGTERM')
  await server?.exited
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** Starts `bun src/main.ts serve` on a free port and resolves with the port it printed. */
async function startServer(dataDir: string): Promise<number> {
  const proc = Bun.spawn([process.execPath, join(root, 'src', 'main.ts'), 'serve'], {
    cwd: root,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_FORMAT: 'off', BACKUP_DIR: '' },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  server = proc
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let seen = ''
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    const { value, done } = await reader.read()
    if (done) break
    seen += decoder.decode(value, { stream: true })
    const match = /pfin listening on http:\/\/[^:]+:(\d+)/.exec(seen)
    if (match) {
      // Keep draining its stdout so the server never blocks on a full pipe.
      void (async () => {
        while (!(await reader.read()).done) {}
      })()
      return Number(match[1])
    }
  }
  throw new Error(`the server did not say where it listens; it printed:\n${seen}`)
}

/** A scratch working directory where `bun run admin` finds this checkout's scripts and code. */
function scratchCheckout(): string {
  const work = tempDir('pfin-readme-work-')
  dirs.push(work)
  for (const name of ['package.json', 'bunfig.toml', 'tsconfig.json', 'src', 'drizzle', 'node_modules']) {
    if (existsSync(join(root, name))) symlinkSync(join(root, name), join(work, name))
  }
  return work
}

/** One bash script: a curl wrapper that records each answer's status, then every runnable block. */
function script(port: number, log: string): string {
  const parts = [
    'set -Eeo pipefail',
    // Each curl call also dumps the answer's headers to a file (-D), so the status is known
    // whatever the example prints; the call is logged with the block it belongs to.
    'curl() {',
    '  local headers rc=0',
    `  headers=$(mktemp "${log}/headers.XXXXXX")`,
    '  command curl -D "$headers" "$@" || rc=$?',
    `  printf '%s\\t%s\\t%s\\n' "$README_BLOCK" "$headers" "$*" >> "${log}/calls"`,
    '  return $rc',
    '}',
    `trap 'echo "README block $README_BLOCK: \\"$BASH_COMMAND\\" failed (exit $?)" >&2; echo "$README_BLOCK" > "${log}/failed"' ERR`,
  ]
  runnable.forEach((block, index) => {
    parts.push(
      `# ---- README.md line ${block.line} (${block.section})`,
      `README_BLOCK=${index}`,
      `exec > "${log}/out.${index}" 2> "${log}/err.${index}"`,
      block.code.replaceAll('localhost:3000', `localhost:${port}`),
    )
  })
  parts.push('exec >&- 2>&-', 'exit 0', '')
  return parts.join('\n')
}

function lastStatus(headersFile: string): number {
  const statuses = [...readFileSync(headersFile, 'utf8').matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)].map((m) => Number(m[1]))
  return statuses.at(-1) ?? 0
}

beforeAll(async () => {
  if (missing.length > 0) return
  const dataDir = tempDir('pfin-readme-data-')
  const log = tempDir('pfin-readme-log-')
  dirs.push(dataDir, log)
  const port = await startServer(dataDir)
  const work = scratchCheckout()
  const scriptPath = join(log, 'readme.sh')
  writeFileSync(scriptPath, script(port, log))
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` }
  // Nothing from the caller's shell may stand in for what the examples set themselves.
  for (const name of ['KEY', 'OWNER', 'H', 'CHECKING', 'DOLLARS', 'PORT', 'HOST', 'PFIN_URL', 'PFIN_API_KEY', 'BACKUP_DIR']) delete env[name]
  const bash = Bun.spawn(['bash', scriptPath], { cwd: work, env, stdout: 'pipe', stderr: 'pipe' })
  const [, stderr, code] = await Promise.all([new Response(bash.stdout).text(), new Response(bash.stderr).text(), bash.exited])
  const out = runnable.map((_, index) => (existsSync(join(log, `out.${index}`)) ? readFileSync(join(log, `out.${index}`), 'utf8') : ''))
  const errs = runnable.map((_, index) => (existsSync(join(log, `err.${index}`)) ? readFileSync(join(log, `err.${index}`), 'utf8') : ''))
  const calls = existsSync(join(log, 'calls'))
    ? readFileSync(join(log, 'calls'), 'utf8')
        .trim()
        .split('\n')
        .map((row) => {
          const [block, headers, args] = row.split('\t') as [string, string, string]
          return { block: Number(block), status: lastStatus(headers), args }
        })
    : []
  run = { code, stderr, out, calls, work }
  if (code !== 0) {
    const failed = existsSync(join(log, 'failed')) ? Number(readFileSync(join(log, 'failed'), 'utf8')) : -1
    const block = runnable[failed]
    console.error(
      block
        ? `README block at line ${block.line} (${block.section}) failed.\nstderr:\n${errs[failed]}\nstdout:\n${out[failed]}`
        : `the README script failed before any block (exit ${code}):\n${stderr}`,
    )
  }
}, 60_000)

const blockWith = (needle: string) => {
  const index = runnable.findIndex((block) => block.code.includes(needle))
  expect(index, `a runnable README block containing ${needle}`).toBeGreaterThanOrEqual(0)
  return index
}
const callsTo = (pattern: RegExp) => run.calls.filter((call) => pattern.test(call.args))

test('the README marks what it does not run, and runs the rest', () => {
  for (const block of blocks.filter((b) => b.notRun !== null)) console.log(`not run: README.md:${block.line} (${block.section}): ${block.notRun}`)
  console.log(`ran ${runnable.length} of ${blocks.length} shell blocks`)
  // The front door runs: nothing in these sections may be marked away.
  for (const section of ['Using the API', 'Admin commands', 'Keeping a copy in sync']) {
    expect(blocks.filter((b) => b.section === section && b.notRun !== null).map((b) => b.line)).toEqual([])
    expect(runnable.some((b) => b.section === section)).toBe(true)
  }
  expect(runnable.some((b) => b.section === 'Quick start')).toBe(true)
  for (const block of runnable) {
    const code = block.code
      .split('\n')
      .map((line) => line.replace(/(^|\s)#.*$/, ''))
      .join('\n')
    // Placeholders (own_…, acct_…) cannot run as written; and only localhost:3000 is rewritten.
    expect({ line: block.line, placeholder: code.includes('…') }).toEqual({ line: block.line, placeholder: false })
    expect({ line: block.line, port: code.replaceAll('localhost:3000', '').includes(':3000') }).toEqual({ line: block.line, port: false })
  }
})

test.skipIf(missing.length > 0)('every runnable block exits 0, in order, in one shell', () => {
  expect(run.code).toBe(0)
  expect(run.out.length).toBe(runnable.length)
})

test.skipIf(missing.length > 0)('no HTTP answer is an error where the README promises success', () => {
  expect(run.calls.length).toBeGreaterThanOrEqual(10)
  expect(run.calls.filter((call) => call.status === 0 || call.status >= 400)).toEqual([])
})

test.skipIf(missing.length > 0)('quick start: the captured key reads /v1/me', () => {
  const out = run.out[blockWith('/v1/me')] as string
  expect(JSON.parse(out).data).toMatchObject({ name: 'Ana Silva', country: 'PT', defaultCurrency: 'EUR' })
  expect(run.out[blockWith('OWNER=$(bun run --silent admin owner create --name "Ana Silva" --country PT')]).toMatch(/^pfk_key_\w+_\S+\n$/)
})

test.skipIf(missing.length > 0)('Using the API: what the comments promise', () => {
  const index = blockWith('/v1/transactions/upsert')
  const out = run.out[index] as string
  const calls = run.calls.filter((call) => call.block === index)
  // Two accounts, both 201; their ids echoed.
  expect(calls.filter((call) => /\/v1\/accounts\b/.test(call.args)).map((call) => call.status)).toEqual([201, 201])
  expect(out).toMatch(/^acct_\w+ acct_\w+$/m)
  // -i: the status line and Location of the expense.
  expect(out).toMatch(/^HTTP\/1\.1 201 Created\r?$/m)
  expect(out).toMatch(/^Location: \/v1\/transactions\/txn_\w+\r?$/m)
  // The transfer: 100 EUR out, 108.42 USD in.
  expect(out).toContain('"isTransfer":true')
  expect(out).toContain('"destinationAmount":108.42')
  // The upsert: created, then updated; -w prints the two statuses after the bodies.
  expect(callsTo(/\/v1\/transactions\/upsert/).map((call) => call.status)).toEqual([201, 200])
  expect([...out.matchAll(/^(\d{3})$/gm)].map((m) => m[1])).toEqual(['201', '200'])
  // The list and the agent context: curl -s adds no newline, so the two bodies share the last line.
  const [listText, contextText] = (out.trim().split('\n').at(-1) as string).split('}{"data":')
  const list = JSON.parse(`${listText}}`)
  expect(list.data.length).toBe(3)
  expect(list.data.filter((txn: { externalId: string | null }) => txn.externalId === 'bank-tx-9812').length).toBe(1)
  const context = JSON.parse(`{"data":${contextText}`)
  expect(context.data.accounts.map((account: { name: string }) => account.name)).toEqual(['Main checking', 'Dollar account'])
})

test.skipIf(missing.length > 0)('keeping a copy in sync: a page of changes', () => {
  const page = JSON.parse(run.out[blockWith('/v1/changes')] as string)
  expect(page.data.length).toBeGreaterThan(0)
  expect(typeof page.nextCursor).toBe('string')
})

test.skipIf(missing.length > 0)('importing a bank export: the dry run reports what the README shows', () => {
  const report = JSON.parse(run.out[blockWith('/v1/transactions/batch')] as string)
  expect(report.summary).toEqual({ created: 1, updated: 0, unchanged: 0, skippedDeleted: 0, failed: 1 })
  expect(report.data[0]).toMatchObject({ index: 0, externalId: 'bank-20261120-001', operation: 'created', errors: [] })
  expect(report.data[1]).toMatchObject({
    index: 1,
    externalId: 'bank-20261120-002',
    operation: null,
    errors: [{ field: 'amount', code: 'validation_failed', detail: 'must be a number' }],
  })
})

test.skipIf(missing.length > 0)('admin examples run through the real CLI', () => {
  const out = run.out[blockWith('admin key revoke')] as string
  expect(out).toContain('Created owner own_')
  expect(out).toMatch(/"key":"pfk_key_/)
  expect(out).toMatch(/revoked/i)
  expect(out).toContain('pfin owner create')
  expect(readdirSync(run.work)).toContain('ana-2026-11-21.db')
  expect(run.out[blockWith('--name "desktop agent"')]).toMatch(/pfk_key_/)
})
