import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startUnthrottledServer, type TestServer, tempDir } from '../support/harness.ts'

/**
 * The TypeScript client installs as its README says, into an empty project outside this
 * repository (so nothing resolves from the repository's node_modules): from a clone with
 * `bun add ./clients/typescript` and no build step (Bun runs the TypeScript sources, tsc checks
 * against them), and as the tarball `npm pack` makes (its prepack builds dist/ with tsc; Node runs
 * the JavaScript, tsc checks against the declarations). Each project then runs one small script
 * against a real pfin server: a read, a write with its Idempotency-Key, paging, the change feed,
 * an edit with If-Match and a stale one refused.
 *
 * Installs are offline (`bun add --offline`, from Bun's cache, which the repository's own install
 * filled with openapi-fetch); a machine whose cache lacks it installs from the registry instead.
 */

setDefaultTimeout(180_000)

const ROOT = join(import.meta.dir, '..', '..')
const CLIENT_DIR = join(ROOT, 'clients', 'typescript')
const TSC = join(ROOT, 'node_modules', '.bin', 'tsc')
/** A copy of the package inside the repository (its .tmp), so tsc and openapi-fetch resolve for the build as in a checkout. */
const PACK_DIR = join(ROOT, '.tmp', `client-pack-${crypto.randomUUID()}`)
const dirs: string[] = [PACK_DIR]

let server: TestServer

beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(async () => {
  await server?.stop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

async function run(cmd: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const proc = Bun.spawn(cmd, { cwd, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...env } })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${cmd.join(' ')} (in ${cwd}) exited ${code}:\n${out}\n${err}`)
  return out
}

/** `bun add --offline <what>`, or online when Bun's cache has never seen a dependency. */
async function bunAdd(project: string, what: string): Promise<void> {
  try {
    await run([process.execPath, 'add', '--offline', what], project)
  } catch (error) {
    if (!String(error).includes('no cached manifest')) throw error
    await run([process.execPath, 'add', what], project)
  }
}

/** The README's first steps, as a consumer writes them: a read, a write with retry, paging, the feed. */
const MAIN = `import { createPfinClient, isPfinError } from '@pfin/client'
import { apiKey, baseUrl } from './config.js'

const pfin = createPfinClient({ baseUrl, apiKey, exactDecimals: true })
const { data: me } = await pfin.get('/v1/me')
const { data: account } = await pfin.post('/v1/accounts', { body: { name: 'Main checking', type: 'bank', balance: '1250.50', currency: 'EUR' } })
const key = crypto.randomUUID()
const first = await pfin.POST('/v1/transactions', { params: { header: { 'Idempotency-Key': key } }, body: { accountId: account.id, amount: '12.90', date: '2026-11-21', payeeName: 'Pingo Doce' } })
const retry = await pfin.POST('/v1/transactions', { params: { header: { 'Idempotency-Key': key } }, body: { accountId: account.id, amount: '12.90', date: '2026-11-21', payeeName: 'Pingo Doce' } })
const amounts: string[] = []
for await (const t of pfin.paginate('/v1/transactions', { query: { accountId: account.id } })) amounts.push(t.amount)
const kinds: string[] = []
for await (const page of pfin.changes()) for (const change of page.data) kinds.push(change.resource)
let missing = ''
try {
  await pfin.get('/v1/accounts/{accountId}', { params: { path: { accountId: 'acct_nope' } } })
} catch (error) {
  if (isPfinError(error, 'not_found')) missing = error.code
}
// If-Match: the tag read before a change is stale after it.
const read = await pfin.GET('/v1/accounts/{accountId}', { params: { path: { accountId: account.id } } })
const etag = read.response.headers.get('etag') as string
await pfin.patch('/v1/accounts/{accountId}', { params: { path: { accountId: account.id }, header: { 'If-Match': etag } }, body: { name: 'Everyday' } })
let stale = ''
try {
  await pfin.patch('/v1/accounts/{accountId}', { params: { path: { accountId: account.id }, header: { 'If-Match': etag } }, body: { name: 'Other' } })
} catch (error) {
  if (isPfinError(error, 'precondition_failed')) stale = error.code
}
console.log(JSON.stringify({
  me: me.id,
  balance: (await pfin.get('/v1/accounts/{accountId}', { params: { path: { accountId: account.id } } })).data.balance,
  replayed: retry.response.headers.get('idempotent-replayed'),
  same: first.data?.data.id === retry.data?.data.id,
  amounts,
  kinds: [...new Set(kinds)].sort(),
  missing,
  stale,
}))
`

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'Bundler',
    lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    types: [],
    strict: true,
    skipLibCheck: true,
    outDir: 'out',
  },
  include: ['*.ts'],
}

/** An empty project outside the repository, with the script and its settings (the server, a key of an owner of its own). */
async function emptyProject(): Promise<string> {
  const project = tempDir('pfin-client-consumer-')
  dirs.push(project)
  const consumer = await server.owner({ name: 'Consumer', country: 'PT' })
  writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2)}\n`)
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG))
  writeFileSync(join(project, 'config.ts'), `export const baseUrl = ${JSON.stringify(server.url)}\nexport const apiKey = ${JSON.stringify(consumer.key)}\n`)
  writeFileSync(join(project, 'main.ts'), MAIN)
  return project
}

function expectRan(output: string): void {
  const result = JSON.parse(output.trim().split('\n').at(-1) as string)
  expect(result).toMatchObject({
    me: expect.stringMatching(/^own_/),
    balance: '1237.6',
    replayed: 'true',
    same: true,
    amounts: ['12.9'],
    kinds: ['account', 'payee', 'transaction'],
    missing: 'not_found',
    stale: 'precondition_failed',
  })
}

// npm makes the tarball, Node runs it: a machine without them cannot check what a reader would do.
const missing = ['npm', 'node'].filter((tool) => !Bun.which(tool))
if (missing.length > 0) console.warn(`SKIPPED the client's tarball install: ${missing.join(' and ')} not found`)

describe('@pfin/client installs into an empty project', () => {
  test('from a clone: bun add ./clients/typescript, no build; Bun runs it, tsc checks it', async () => {
    const project = await emptyProject()
    await bunAdd(project, CLIENT_DIR)
    const installed = JSON.parse(readFileSync(join(project, 'node_modules', '@pfin', 'client', 'package.json'), 'utf8'))
    expect(installed.exports['.'].import).toBe('./src/index.ts')
    await run([TSC, '--noEmit', '-p', project], project)
    expectRan(await run([process.execPath, 'main.ts'], project))
  })

  test.skipIf(missing.length > 0)('as a tarball: npm pack (prepack builds dist/), then bun add the .tgz; Node runs it, tsc checks it', async () => {
    mkdirSync(PACK_DIR, { recursive: true })
    for (const name of ['package.json', 'tsconfig.json', 'README.md', 'LICENSE', 'src', 'scripts'])
      cpSync(join(CLIENT_DIR, name), join(PACK_DIR, name), { recursive: true })
    // npm puts node_modules/.bin of the package's folder and of every folder above it on PATH: the repository's tsc.
    await run(['npm', 'pack', '--pack-destination', PACK_DIR], PACK_DIR)
    const tarball = readdirSync(PACK_DIR).find((name) => name.endsWith('.tgz'))
    expect(tarball).toBe('pfin-client-0.1.0.tgz')
    // The checkout's package.json is back as it was, pointing at the sources.
    expect(readFileSync(join(PACK_DIR, 'package.json'), 'utf8')).toBe(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8'))
    const project = await emptyProject()
    await bunAdd(project, join(PACK_DIR, tarball as string))
    const packed = JSON.parse(readFileSync(join(project, 'node_modules', '@pfin', 'client', 'package.json'), 'utf8'))
    expect(packed.exports['.']).toEqual({ types: './dist/index.d.ts', import: './dist/index.js', default: './dist/index.js' })
    expect(readdirSync(join(project, 'node_modules', '@pfin', 'client', 'dist'))).toContain('index.d.ts')
    // tsc checks the script against the declarations and writes it as JavaScript; Node runs that.
    await run([TSC, '-p', project], project)
    expectRan(await run(['node', join('out', 'main.js')], project))
  })
})
