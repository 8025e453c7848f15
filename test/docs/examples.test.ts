import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { tempDir } from '../support/harness.ts'

/**
 * Every shell example of README.md and docs/*.md runs as written, as a reader would run it.
 *
 * Each file gets a fresh checkout-like folder, a real server started there (`bun src/main.ts
 * serve`, data in its `./data`, as the quick start's first terminal) and ONE bash process that
 * runs the file's ```sh and ```bash blocks in order, so variables carry from block to block as
 * in a terminal, and nothing else is set: the environment holds only PATH, HOME and the locale.
 * README.md runs from its first block; each docs/ file runs in its own fresh folder and shell
 * that starts with the README's quick start (its reader has done that much, and no more).
 *
 * The one change made to the text: the server listens on a free port, and `localhost:3000`
 * becomes `localhost:<port>` (port 3000 may be taken by the reader's own pfin).
 *
 * A block is skipped only when the line before its fence says why: `<!-- not run: needs
 * systemd -->`. Every other block must run to its end with every command exiting 0 (`set -e`,
 * pipefail), and every HTTP answer it gets must be below 400, unless the line before its fence
 * names the statuses it shows on purpose: `<!-- answers: 422 -->`. What the text promises (201
 * then 200, the dry-run report, …) is checked below.
 */

const root = join(import.meta.dir, '..', '..')
const README = 'README.md'
const files = [
  README,
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
]

interface Block {
  file: string
  /** 1-based line of the opening fence. */
  line: number
  section: string
  code: string
  /** The reason from `<!-- not run: … -->`, or null when the block runs. */
  notRun: string | null
  /** The statuses from `<!-- answers: 422 -->`, or null when every answer must be a success. */
  answers: number[] | null
}

/** The ```sh / ```bash blocks of one file, with their section and the marker on the line before. */
function shellBlocks(file: string): Block[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n')
  const blocks: Block[] = []
  let section = ''
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    const heading = /^(#{1,4}) (.+)$/.exec(line)
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
      const before = lines[k] ?? ''
      const notRun = /^\s*<!--\s*not run:\s*(.+?)\s*-->\s*$/.exec(before)
      const answers = /^\s*<!--\s*answers:\s*([\d\s,]+?)\s*-->\s*$/.exec(before)
      blocks.push({
        file,
        line: i + 1,
        section,
        code: `${body.join('\n')}\n`,
        notRun: notRun ? (notRun[1] as string) : null,
        answers: answers ? (answers[1] as string).split(/[\s,]+/).map(Number) : null,
      })
    }
    i = j
  }
  return blocks
}

const blocksOf = new Map(files.map((file) => [file, shellBlocks(file)]))
const runnableIn = (file: string) => (blocksOf.get(file) ?? []).filter((block) => block.notRun === null)
const quickStart = runnableIn(README).filter((block) => block.section === 'Quick start')

/** What one file's shell runs: the README from its start; a docs/ file after the quick start. */
const scriptOf = (file: string) => (file === README ? runnableIn(README) : [...quickStart, ...runnableIn(file)])

// The examples are bash with curl; a machine without them cannot run what a reader would.
const missing = ['bash', 'curl'].filter((tool) => !Bun.which(tool))
if (missing.length > 0) console.warn(`SKIPPED the docs' examples: ${missing.join(' and ')} not found (apt-get install -y ${missing.join(' ')})`)

interface Call {
  block: number
  status: number
  args: string
}

interface Run {
  file: string
  blocks: Block[]
  code: number
  stderr: string
  /** stdout and stderr of each block, by index into `blocks`. */
  out: string[]
  err: string[]
  /** Whether each block ran to its end. */
  done: boolean[]
  /** The blocks in which a command failed, in order, also where it did not stop the script (`eval "$(failing)"`). */
  failures: number[]
  calls: Call[]
  /** The folder the shell ran in. */
  work: string
}

const runs = new Map<string, Run>()
const dirs: string[] = []

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** Only what a terminal has before the reader types anything. */
function terminalEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` }
  for (const name of ['HOME', 'USER', 'LANG', 'LC_ALL', 'TMPDIR']) {
    const value = process.env[name]
    if (value !== undefined) env[name] = value
  }
  return env
}

/** A folder where `bun run start` and `bun run admin` find this checkout's scripts and code. */
function scratchCheckout(): string {
  const work = tempDir('pfin-examples-')
  dirs.push(work)
  for (const name of ['package.json', 'bunfig.toml', 'tsconfig.json', 'src', 'drizzle', 'node_modules']) {
    if (existsSync(join(root, name))) symlinkSync(join(root, name), join(work, name))
  }
  return work
}

/** Starts `bun src/main.ts serve` in `work` (data in its ./data) on a free port; resolves with the port. */
async function startServer(work: string): Promise<{ port: number; server: ReturnType<typeof Bun.spawn> }> {
  const server = Bun.spawn([process.execPath, join(work, 'src', 'main.ts'), 'serve'], {
    cwd: work,
    env: { ...terminalEnv(), PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'off' },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const reader = (server.stdout as ReadableStream<Uint8Array>).getReader()
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
      return { port: Number(match[1]), server }
    }
  }
  server.kill('SIGKILL')
  throw new Error(`the server did not say where it listens; it printed:\n${seen}`)
}

/** One bash script: a curl wrapper that records each answer's status, then the blocks in order. */
function script(blocks: Block[], port: number, log: string): string {
  const parts = [
    'set -Eeo pipefail',
    // Each curl call also dumps the answer's headers to a file (-D), so the status is known
    // whatever the example prints; the call is logged with the block it belongs to.
    'curl() {',
    '  local headers args="$*" rc=0',
    `  headers=$(mktemp "${log}/headers.XXXXXX")`,
    '  command curl -D "$headers" "$@" || rc=$?',
    // One line per call: a body given with -d may hold line breaks.
    `  printf '%s\\t%s\\t%s\\n' "$EXAMPLE_BLOCK" "$headers" "\${args//$'\\n'/ }" >> "${log}/calls"`,
    '  return $rc',
    '}',
    `trap 'echo "block $EXAMPLE_BLOCK: \\"$BASH_COMMAND\\" failed (exit $?)" >&2; echo "$EXAMPLE_BLOCK" >> "${log}/failed"' ERR`,
  ]
  blocks.forEach((block, index) => {
    parts.push(
      `# ---- ${block.file} line ${block.line} (${block.section})`,
      `EXAMPLE_BLOCK=${index}`,
      `exec > "${log}/out.${index}" 2> "${log}/err.${index}"`,
      block.code.replaceAll('localhost:3000', `localhost:${port}`),
      `: > "${log}/done.${index}"`,
    )
  })
  parts.push('exec >&- 2>&-', 'exit 0', '')
  return parts.join('\n')
}

function lastStatus(headersFile: string): number {
  const statuses = [...readFileSync(headersFile, 'utf8').matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)].map((m) => Number(m[1]))
  return statuses.at(-1) ?? 0
}

const readIfThere = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : '')

async function runExamples(file: string): Promise<Run> {
  const blocks = scriptOf(file)
  const work = scratchCheckout()
  const log = tempDir('pfin-examples-log-')
  dirs.push(log)
  const { port, server } = await startServer(work)
  try {
    const scriptPath = join(log, 'examples.sh')
    writeFileSync(scriptPath, script(blocks, port, log))
    const bash = Bun.spawn(['bash', scriptPath], { cwd: work, env: terminalEnv(), stdout: 'pipe', stderr: 'pipe' })
    const [, stderr, code] = await Promise.all([new Response(bash.stdout).text(), new Response(bash.stderr).text(), bash.exited])
    const calls = readIfThere(join(log, 'calls'))
      .split('\n')
      .filter(Boolean)
      .map((row) => {
        const [block, headers, args] = row.split('\t') as [string, string, string]
        return { block: Number(block), status: lastStatus(headers), args }
      })
    const run: Run = {
      file,
      blocks,
      code,
      stderr,
      out: blocks.map((_, index) => readIfThere(join(log, `out.${index}`))),
      err: blocks.map((_, index) => readIfThere(join(log, `err.${index}`))),
      done: blocks.map((_, index) => existsSync(join(log, `done.${index}`))),
      failures: readIfThere(join(log, 'failed')).split('\n').filter(Boolean).map(Number),
      calls,
      work,
    }
    if (code !== 0 || run.failures.length > 0) {
      const failed = run.failures[0] ?? -1
      const block = blocks[failed]
      console.error(
        block
          ? `${file}: the block at ${block.file}:${block.line} (${block.section}) failed.\nstderr:\n${run.err[failed]}\nstdout:\n${run.out[failed]}`
          : `${file}: the script failed before any block (exit ${code}):\n${stderr}`,
      )
    }
    return run
  } finally {
    server.kill('SIGTERM')
    await server.exited
  }
}

beforeAll(async () => {
  if (missing.length > 0) return
  // One file after another: each starts its own server, and the machine may be shared.
  for (const file of files) if (runnableIn(file).length > 0) runs.set(file, await runExamples(file))
}, 180_000)

/** The run of `file`, and the index in it of its block containing `needle`. */
function blockWith(file: string, needle: string): { run: Run; index: number } {
  const run = runs.get(file) as Run
  const index = run.blocks.findIndex((block) => block.file === file && block.code.includes(needle))
  expect(index, `a runnable block of ${file} containing ${needle}`).toBeGreaterThanOrEqual(0)
  return { run, index }
}
const outOf = (file: string, needle: string) => {
  const { run, index } = blockWith(file, needle)
  return run.out[index] as string
}
const callsOf = (file: string, needle: string) => {
  const { run, index } = blockWith(file, needle)
  return run.calls.filter((call) => call.block === index)
}

describe('what runs', () => {
  test('every file marks what it does not run, and the front door runs', () => {
    for (const [file, blocks] of blocksOf) {
      for (const block of blocks.filter((b) => b.notRun !== null)) console.log(`not run: ${file}:${block.line} (${block.section}): ${block.notRun}`)
      console.log(`${file}: runs ${runnableIn(file).length} of ${blocks.length} shell blocks`)
    }
    const readme = blocksOf.get(README) as Block[]
    // The quick start's server runs in the reader's first terminal; everything else of it runs.
    expect(readme.filter((b) => b.section === 'Quick start' && b.notRun !== null).map((b) => b.code.trim())).toEqual(['bun install && bun run start'])
    expect(quickStart.map((block) => block.code)).toEqual([expect.stringContaining('--with-key'), expect.stringContaining('/v1/me')])
    expect(readme.filter((b) => b.section === 'A short tour' && b.notRun !== null)).toEqual([])
    expect(runnableIn(README).filter((b) => b.section === 'A short tour').length).toBeGreaterThan(0)
    for (const file of ['docs/api.md', 'docs/agents.md', 'docs/operations.md']) expect(runnableIn(file).length).toBeGreaterThan(0)
  })

  test('runnable blocks hold no placeholder and no port but localhost:3000', () => {
    for (const block of files.flatMap(runnableIn)) {
      const code = block.code
        .split('\n')
        .map((line) => line.replace(/(^|\s)#.*$/, ''))
        .join('\n')
      const where = `${block.file}:${block.line}`
      // Placeholders (own_…, acct_…) cannot run as written; and only localhost:3000 is rewritten.
      expect({ where, placeholder: code.includes('…') }).toEqual({ where, placeholder: false })
      expect({ where, port: code.replaceAll('localhost:3000', '').includes(':3000') }).toEqual({ where, port: false })
    }
  })
})

describe.each(files.filter((file) => runnableIn(file).length > 0))('%s', (file) => {
  test.skipIf(missing.length > 0)('every runnable block ran to its end, in order, in one shell', () => {
    const run = runs.get(file) as Run
    const where = (index: number) => `${run.blocks[index]?.file}:${run.blocks[index]?.line}`
    expect(run.failures.map(where)).toEqual([])
    expect(run.code).toBe(0)
    expect(run.blocks.flatMap((_, index) => (run.done[index] ? [] : [where(index)]))).toEqual([])
  })

  test.skipIf(missing.length > 0)('every HTTP answer is a success, or what its block says it shows', () => {
    const run = runs.get(file) as Run
    expect(run.calls.length).toBeGreaterThan(0)
    const unexpected = run.calls
      .filter((call) => {
        const allowed = run.blocks[call.block]?.answers
        return allowed ? !allowed.includes(call.status) : call.status === 0 || call.status >= 400
      })
      .map((call) => `${run.blocks[call.block]?.file}:${run.blocks[call.block]?.line} got ${call.status}: curl ${call.args}`)
    expect(unexpected).toEqual([])
    run.blocks.forEach((block, index) => {
      if (block.answers) expect(run.calls.filter((call) => call.block === index).length).toBeGreaterThan(0)
    })
  })
})

describe.skipIf(missing.length > 0)('README.md', () => {
  test('quick start: one command makes the owner and its key; the key reads /v1/me', () => {
    const { run, index } = blockWith(README, '--with-key')
    expect(run.err[index]).toContain('own_')
    expect(JSON.parse(outOf(README, '/v1/me')).data).toMatchObject({ name: 'Ana', tier: 'pro' })
  })

  test('a short tour: what the comments promise', () => {
    expect(callsOf(README, 'DOLLARS=$(').map((call) => call.status)).toEqual([201, 201])
    expect(outOf(README, 'DOLLARS=$(')).toMatch(/^acct_\w+ acct_\w+\n$/)
    const writes = outOf(README, '"isTransfer":true')
    // -i: the status line and Location of the expense; then the transfer, 100 EUR out, 108.42 USD in.
    expect(writes).toMatch(/^HTTP\/1\.1 201 Created\r?$/m)
    expect(writes).toMatch(/^Location: \/v1\/transactions\/txn_\w+\r?$/m)
    expect(writes).toContain('"isTransfer":true')
    expect(writes).toContain('"destinationAmount":108.42')
    // The upsert: created, then updated; -w prints the two statuses after the bodies.
    expect(callsOf(README, '/v1/transactions/upsert').map((call) => call.status)).toEqual([201, 200])
    expect([...outOf(README, '/v1/transactions/upsert').matchAll(/^(\d{3})$/gm)].map((m) => m[1])).toEqual(['201', '200'])
    // The list and the agent context: curl -s adds no newline, so the two bodies share one line.
    const [listText, contextText] = outOf(README, '/v1/agent/context').trim().split('}{"data":')
    const list = JSON.parse(`${listText}}`)
    expect(list.data.length).toBe(3)
    expect(list.data.filter((txn: { externalId: string | null }) => txn.externalId === 'bank-tx-9812').length).toBe(1)
    const context = JSON.parse(`{"data":${contextText}`)
    expect(context.data.accounts.map((account: { name: string }) => account.name)).toEqual(['Main checking', 'Dollar account'])
  })
})

describe.skipIf(missing.length > 0)('docs/api.md', () => {
  const api = 'docs/api.md'

  test('a rule fills in a new transaction; test shows what apply then changes', () => {
    expect(outOf(api, 'COFFEE_RULE=').trim()).toBe('cat_sys_coffee 1')
    expect(outOf(api, 'rules/test').trim().split('\n')).toEqual(['{"scanned":3,"matched":2,"changed":1} null → cat_sys_coffee', '1'])
  })

  test('If-None-Match is 304 while the copy is current; If-Match writes once, then its stale tag is 412 (CONTRACT §25)', () => {
    expect(outOf(api, 'If-Match: $ETAG').trim().split('\n')).toEqual(['304', '200', 'precondition_failed'])
  })

  test('a retry with the same key replays the answer and writes once', () => {
    const out = outOf(api, 'RETRY_KEY')
    expect(out.match(/^HTTP\/1\.1 201 Created\r?$/gm)?.length).toBe(2)
    expect(out.match(/^idempotent-replayed: true\r?$/gim)?.length).toBe(1)
    const locations = out.match(/^location: .+$/gim) ?? []
    expect(locations.length).toBe(2)
    expect(new Set(locations).size).toBe(1)
    expect(out.trim().split('\n').at(-1)).toBe('1246.3')
  })

  test('paging follows nextCursor through every category, each once', () => {
    expect(callsOf(api, 'nextCursor').length).toBeGreaterThanOrEqual(2)
    const ids = outOf(api, 'nextCursor')
      .trim()
      .split('\n')
      .map((line) => line.split(' ')[0])
    expect(ids.length).toBeGreaterThan(20)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) expect(id).toMatch(/^cat_sys_/)
  })

  test('splits and tags: the category filter finds the receipt through its leg, amount alone is refused, amount with legs and the tag filter work', () => {
    expect(outOf(api, 'RECEIPT=').trim()).toBe('48.3 null cat_sys_groceries 31.1, cat_sys_housing 12.2, cat_sys_gifts_donations 5')
    const refused = JSON.parse(outOf(api, '{"amount":50.30}\''))
    expect(refused).toMatchObject({ code: 'rule_violation', detail: 'amount: this transaction is split; send splits that sum to the new amount' })
    expect(outOf(api, 'TRIP=').trim()).toBe('50.3')
  })

  test('budgets: the plan against what the receipt and the bakery spent; copyFrom with one change', () => {
    expect(outOf(api, 'ME=').trim().split('\n')).toEqual([
      'cat_sys_food_drinks 400 41 359',
      'cat_sys_groceries 250 33.1 216.9',
      '{"plannedExpense":400,"spentExpense":58.2,"plannedIncome":0,"receivedIncome":0} {"spent":4.2,"transactionCount":1,"otherCurrencies":[]}',
    ])
    expect(outOf(api, '"copyFrom":"2026-11"').trim()).toBe('cat_sys_food_drinks 400, cat_sys_groceries 300')
  })

  test('the error example is the problem it shows', () => {
    const problem = JSON.parse(outOf(api, '"transferToAccountId":"$CHECKING"'))
    expect(problem).toMatchObject({ type: 'urn:pfin:problem:rule_violation', status: 422, code: 'rule_violation' })
    expect(Object.keys(problem).sort()).toEqual(['code', 'detail', 'request_id', 'status', 'title', 'type'])
  })

  test('batch import: the dry run, the import, and the same export again', () => {
    const report = JSON.parse(outOf(api, '"dryRun":true'))
    expect(report.summary).toEqual({ created: 1, updated: 0, unchanged: 0, matched: 0, skippedDeleted: 0, failed: 1 })
    expect(report.data[0]).toMatchObject({ index: 0, externalId: 'bank-20261120-001', operation: 'created', errors: [] })
    expect(report.data[1]).toMatchObject({
      index: 1,
      externalId: 'bank-20261120-002',
      operation: null,
      errors: [{ field: 'amount', code: 'validation_failed', detail: 'must be a number' }],
    })
    const nights = outOf(api, 'EXPORT=')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(nights).toEqual([
      { created: 2, updated: 0, unchanged: 0, matched: 0, skippedDeleted: 0, failed: 0 },
      { created: 0, updated: 0, unchanged: 2, matched: 0, skippedDeleted: 0, failed: 0 },
    ])
  })

  test('finding, re-filing and summing: the uncategorized, a text search, one bulk update, the report', () => {
    expect(outOf(api, '-d categoryId=none \\\n').trim().split('\n')).toEqual([
      '2026-11-23 3.1',
      '2026-11-22 4.2',
      '2026-11-20 -2500 salary',
      '2026-11-20 12.9',
      '2026-11-15 23.45',
      '2026-11-15 -2850',
      '2026-11-14 23.45',
      '3.1 4.2',
    ])
    expect(JSON.parse(outOf(api, 'BAKERY='))).toEqual({ updated: 2, unchanged: 0, failed: 0 })
    expect(outOf(api, 'groupBy=category').trim().split('\n')).toEqual([
      'EUR (none) 59.8 5350',
      'EUR Food & Drinks / Groceries 40.4 0',
      'EUR Housing 12.2 0',
      'EUR Food & Drinks / Coffee 7.9 0',
      'EUR Gifts & Donations 5 0',
    ])
  })

  test('statement file import: the dry run reads the file as its comments say, the import creates, the same file again is unchanged', () => {
    const dry = outOf(api, 'cat > statement.csv').trim().split('\n')
    expect(JSON.parse(dry[0]?.split(' ')[0] as string)).toMatchObject({ date: 'Datum', amount: 'Betrag', payee: 'Empfänger', description: 'Buchungstext' })
    expect(dry.slice(0, 1).map((line) => line.split(' ').at(-1))).toEqual(['DD.MM.YYYY'])
    expect(dry.slice(1)).toEqual([
      '2 created 2026-11-14 23.45 Pingo Doce Lisboa',
      '3 created 2026-11-15 -2850 Muster AG',
      '4 created 2026-11-15 23.45 Pingo Doce Lisboa',
    ])
    const runs = outOf(api, 'for run in 1 2')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(runs).toEqual([
      { created: 3, updated: 0, unchanged: 0, matched: 0, skippedDeleted: 0, duplicateInFile: 0, failed: 0 },
      { created: 0, updated: 0, unchanged: 3, matched: 0, skippedDeleted: 0, duplicateInFile: 0, failed: 0 },
    ])
  })

  test('the sync loop copies everything, then only what changed', () => {
    const first = /^(\d+) changes applied; the copy holds (\d+) objects$/m.exec(outOf(api, "cat > sync.ts <<'EOF'"))
    expect(Number(first?.[1])).toBeGreaterThan(0)
    const second = /^(\d+) changes applied; the copy holds (\d+) objects$/m.exec(outOf(api, 'bun sync.ts   #'))
    expect(Number(second?.[1])).toBe(3)
    expect(Number(second?.[2])).toBe(Number(first?.[2]) + 1)
  })
})

describe.skipIf(missing.length > 0)('docs/agents.md', () => {
  test('the bridge lists the read tools for the agent’s read-only key', () => {
    const lines = outOf('docs/agents.md', 'bun run --silent admin mcp').trim().split('\n')
    expect(lines[0]).toBe(
      'get_context list_accounts list_categories find_payees list_tags list_rules test_rule search_transactions get_transaction spending_summary get_changes',
    )
    expect(lines[1]).toMatch(/^pfk_own_\w+_key_\w+_\S+$/)
  })

  test('a raw POST /mcp with curl gets one JSON answer: the REST body of the tool', () => {
    expect(outOf('docs/agents.md', '"name":"search_transactions"').trim()).toBe('data nextCursor hasMore')
  })
})

describe.skipIf(missing.length > 0)('docs/operations.md', () => {
  const ops = 'docs/operations.md'

  test('admin commands run through the real CLI', () => {
    const out = outOf(ops, 'admin key revoke')
    expect(out).toContain('Bruno Costa')
    expect(out).toMatch(/"key":"pfk_own_/)
    expect(out).toMatch(/Revoked key_\w+/)
    expect(out).toContain('Would delete owner own_')
    expect(readdirSync(runs.get(ops)?.work as string)).toContain('bruno.db')
  })

  test('a backup taken beside the running server verifies', () => {
    expect(outOf(ops, 'backup verify')).toContain('is whole')
    expect(existsSync(join(runs.get(ops)?.work as string, 'backups', 'by-hand', 'manifest.json'))).toBe(true)
  })
})
