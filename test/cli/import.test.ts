import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { FIXTURES } from '../imports/helpers.ts'
import { startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { createAccount, listAll } from '../transactions/helpers.ts'
import { expectUsageError, parseOneObject } from './cli.ts'

/** CONTRACT §2, §24: `pfin import FILE --account ID` as a real process against a running server (PFIN_URL, PFIN_API_KEY). */

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')
let server: TestServer
let key: string
let account: string
beforeAll(async () => {
  server = await startUnthrottledServer()
  key = (await server.owner()).key
  account = (await createAccount(server, key, { balance: 0, currency: 'USD' })).id
})
afterAll(() => server.stop())

async function pfin(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn(['bun', MAIN, ...args], { env: { ...process.env, PFIN_URL: server.url, PFIN_API_KEY: key, ...env }, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}

test('a dry run prints the table and writes nothing; the import prints what it did; --json prints the server’s answer', async () => {
  const file = join(FIXTURES, 'ofx1-checking.ofx')
  const dry = await pfin(['import', file, '--account', account, '--dry-run'])
  expect([dry.code, dry.stderr]).toEqual([0, ''])
  expect(dry.stdout).toContain(`Dry run of ${file} into ${account} (ofx, windows-1252, dates YYYYMMDD): nothing was written`)
  expect(dry.stdout).toMatch(/created\s+5\n/)
  expect(dry.stdout).toContain('Statement closing balance 2336.76; account after the import 2336.76; difference 0')
  expect(await listAll(server, key, `?accountId=${account}`)).toEqual([])

  const real = await pfin(['import', file, '--account', account, '--json'])
  expect(real.code).toBe(0)
  const answer = parseOneObject(real.stdout) as { data: { summary: Record<string, number> } }
  expect(answer.data.summary).toMatchObject({ created: 5, failed: 0 })
  expect(await listAll(server, key, `?accountId=${account}`)).toHaveLength(5)
  const again = await pfin(['import', file, '--account', account])
  expect(again.stdout).toMatch(/unchanged\s+5\n/)
})

test('a file the server refuses exits 1 with its reason; usage errors exit 2', async () => {
  const eur = (await createAccount(server, key, { balance: 0, currency: 'EUR' })).id
  const refused = await pfin(['import', join(FIXTURES, 'ofx1-checking.ofx'), '--account', eur])
  expect([refused.code, refused.stdout]).toEqual([1, ''])
  expect(refused.stderr.trim()).toBe('pfin: rule_violation: the statement is in USD, but the account is in EUR')
  expectUsageError(await pfin(['import', join(FIXTURES, 'nope.csv'), '--account', eur]), /does not exist/)
  expectUsageError(await pfin(['import', join(FIXTURES, 'csv-en-chase.csv')]), /--account is required/)
  expectUsageError(await pfin(['import', join(FIXTURES, 'csv-en-chase.csv'), '--account', eur], { PFIN_API_KEY: '' }), /PFIN_API_KEY/)
  const unreachable = await pfin(['import', join(FIXTURES, 'csv-en-chase.csv'), '--account', eur], { PFIN_URL: 'http://127.0.0.1:9' })
  expect([unreachable.code, unreachable.stderr]).toEqual([1, expect.stringContaining('cannot be reached')])
})

test('--date-format and --preset reach the server; --help names the flags', async () => {
  const eur = (await createAccount(server, key, { balance: 0, currency: 'EUR' })).id
  const path = join(FIXTURES, 'csv-pt-nubank.csv')
  const res = await pfin(['import', path, '--account', eur, '--date-format', 'DD/MM/YYYY', '--json'])
  expect(res.code).toBe(0)
  expect((parseOneObject(res.stdout) as { data: { detected: { dateFormat: string } } }).data.detected.dateFormat).toBe('DD/MM/YYYY')
  const preset = await pfin(['import', path, '--account', eur, '--preset', 'imp_nope'])
  expect(preset.stderr).toContain('invalid_reference: presetId')
  const help = await pfin(['import', '--help'])
  expect(help.stdout).toContain('--date-format F')
  expect(help.stdout).toContain('PFIN_API_KEY')
})
