import { decodeJsonVerbatim } from '../platform/json.ts'
import { optional, required, UsageError } from './args.ts'
import { adminCommand } from './invocation.ts'
import type { CommandInput, CommandSpec } from './spec.ts'

/**
 * `pfin import FILE --account ID`: sends a bank statement file to a running server's import
 * route (CONTRACT §2, §24), with the key in PFIN_API_KEY and the server at PFIN_URL as `pfin mcp`
 * takes them, and prints what the import did: a table, or the server's answer with --json.
 */

export const importSpec: CommandSpec = {
  name: 'import',
  summary: 'Send a bank statement file (CSV, OFX/QFX, QIF, camt.053) to a running server and print what it did',
  usage: 'FILE --account ID [--dry-run] [--preset ID] [--date-format F] [--json]',
  flags: [
    { name: 'account', value: 'ID', about: 'the account to import into (acct_…)' },
    { name: 'dry-run', about: 'read and check every row, write nothing' },
    { name: 'preset', value: 'ID', about: 'the import preset (imp_…) that says how to read a CSV layout' },
    { name: 'date-format', value: 'F', about: 'the file’s date format, e.g. DD/MM/YYYY (needed when no day is above 12)' },
  ],
  positionals: ['FILE'],
  example: 'import statement.ofx --account acct_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b --dry-run',
  dataDir: 'none',
  notes:
    'Environment: PFIN_API_KEY (required: a key with transactions:write), PFIN_URL (default http://127.0.0.1:3000).\n' +
    'With --json it prints the server’s answer, one JSON object. A file the server refuses (a row that fails, ambiguous\n' +
    'dates, another account’s statement) exits 1 with the server’s reason on stderr; nothing was written then.',
  run: (session, input) => importCommand(input, session.json),
}

type Json = Record<string, unknown>

/** The server's base URL from PFIN_URL, kept with its path (a reverse proxy may serve pfin under /pfin). */
function serverUrl(env: Record<string, string | undefined>): URL {
  try {
    const url = new URL(env.PFIN_URL?.trim() || 'http://127.0.0.1:3000')
    url.pathname = url.pathname.replace(/\/+$/, '')
    url.search = ''
    url.hash = ''
    return url
  } catch {
    throw new UsageError(`PFIN_URL must be the server's URL, such as http://127.0.0.1:3000 (got "${env.PFIN_URL}")`)
  }
}

export async function importCommand(input: CommandInput, json: boolean, env: Record<string, string | undefined> = process.env): Promise<number> {
  const key = env.PFIN_API_KEY?.trim()
  if (!key) throw new UsageError(`PFIN_API_KEY must hold an API key with transactions:write (make one: ${adminCommand()} key create --owner OWNER_ID)`)
  const path = input.positionals[0] as string
  const account = required(input.flags, 'account')
  const file = Bun.file(path)
  if (!(await file.exists())) throw new UsageError(`the file ${path} does not exist`)
  const query = new URLSearchParams()
  if (input.flags['dry-run'] === true) query.set('dryRun', 'true')
  const preset = optional(input.flags, 'preset')
  if (preset) query.set('presetId', preset)
  const dateFormat = optional(input.flags, 'date-format')
  if (dateFormat) query.set('dateFormat', dateFormat)
  const base = serverUrl(env)
  const url = `${base.href.replace(/\/$/, '')}/v1/accounts/${encodeURIComponent(account)}/imports${query.size ? `?${query}` : ''}`
  let response: Response
  try {
    response = await fetch(url, {
      method: 'POST',
      // A fresh key per run: an import is idempotent by its rows' ids, so running it again is safe.
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/octet-stream', 'idempotency-key': crypto.randomUUID() },
      body: await file.bytes(),
    })
  } catch (error) {
    throw new Error(`pfin at ${base.origin} cannot be reached: ${error instanceof Error ? error.message : String(error)}`)
  }
  const text = await response.text()
  let body: Json | undefined
  try {
    body = decodeJsonVerbatim(text) as Json
  } catch {
    body = undefined
  }
  if (!response.ok) {
    const problem = body as { code?: string; detail?: string } | undefined
    throw new Error(problem?.code ? `${problem.code}: ${problem.detail}` : `${url} answered HTTP ${response.status}; is PFIN_URL the pfin server?`)
  }
  const data = (body as { data?: Json } | undefined)?.data
  if (!data) throw new Error(`${url} answered without an import result; is PFIN_URL the pfin server?`)
  process.stdout.write(json ? `${text.trim()}\n` : `${describe(path, account, data, input.flags['dry-run'] === true)}\n`)
  return 0
}

const number = (value: unknown) => JSON.stringify(value)

/** The import as a person reads it: what was read, what happened to the rows, the rows with errors or warnings. */
function describe(path: string, account: string, data: Json, dryRun: boolean): string {
  const detected = data.detected as Json
  const summary = data.summary as Record<string, number>
  const items = data.items as { line: number; errors: { field: string | null; detail: string }[]; warnings: string[] }[]
  const statement = data.statement as Json | null
  const how = [detected.format, detected.encoding, detected.dateFormat && `dates ${detected.dateFormat}${detected.dateFormatAmbiguous ? ' (ambiguous)' : ''}`]
  const lines = [
    `${dryRun ? 'Dry run of' : 'Imported'} ${path} into ${account} (${how.filter(Boolean).join(', ')})${dryRun ? ': nothing was written' : ''}`,
    '',
  ]
  const rows: [string, number | undefined][] = [
    ['created', summary.created],
    ['updated', summary.updated],
    ['unchanged', summary.unchanged],
    ['skipped (deleted)', summary.skippedDeleted],
    ['duplicate in file', summary.duplicateInFile],
    ['failed', summary.failed],
  ]
  for (const [label, count] of rows) lines.push(`  ${label.padEnd(18)} ${String(count ?? 0).padStart(6)}`)
  if (statement) {
    lines.push(
      '',
      `Statement closing balance ${number(statement.closingBalance)}; account after the import ${number(statement.accountBalanceAfter)}; difference ${number(statement.difference)}`,
    )
  }
  const noted = items.filter((item) => item.errors.length > 0 || item.warnings.length > 0)
  if (noted.length > 0) lines.push('')
  for (const item of noted.slice(0, 20)) {
    for (const error of item.errors) lines.push(`  line ${item.line}: ${error.field ? `${error.field}: ` : ''}${error.detail}`)
    for (const warning of item.warnings) lines.push(`  line ${item.line} (warning): ${warning}`)
  }
  if (noted.length > 20) lines.push(`  … and ${noted.length - 20} more rows (--json lists them all)`)
  return lines.join('\n')
}
