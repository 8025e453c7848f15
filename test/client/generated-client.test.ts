import SwaggerParser from '@apidevtools/swagger-parser'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import openapiTS, { astToString } from 'openapi-typescript'
import { startTestServer, type TestServer } from '../support/harness.ts'

/**
 * CONTRACT §12: a client generated from the served /openapi.json with
 * openapi-typescript + openapi-fetch type-checks (strict) and works unchanged against a real
 * server; and the document itself has what such a client relies on.
 */

const ROOT = join(import.meta.dir, '..', '..')

interface Schema {
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  additionalProperties?: boolean | Schema
  items?: Schema
  anyOf?: Schema[]
  oneOf?: Schema[]
  allOf?: Schema[]
  example?: unknown
  examples?: unknown
  [key: string]: unknown
}
interface MediaType {
  schema?: Schema
  example?: unknown
  examples?: Record<string, { value?: unknown }>
}
interface Operation {
  operationId?: string
  parameters?: { name: string; in: string; required?: boolean }[]
  requestBody?: { required?: boolean; content: Record<string, MediaType> }
  responses: Record<string, { content?: Record<string, MediaType> }>
}
type Document = { openapi: string; info: { version: string }; paths: Record<string, Record<string, Operation>> }

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'trace'] as const

let server: TestServer
let raw: Document
let doc: Document
let workDir: string

beforeAll(async () => {
  server = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_PER_DAY: '1000000' } })
  const res = await server.request('GET', '/openapi.json')
  expect(res.status).toBe(200)
  raw = res.json
  doc = (await SwaggerParser.dereference(structuredClone(raw) as never)) as unknown as Document
  // Inside the repository (so `openapi-fetch` resolves from its node_modules), in the git-ignored .tmp/.
  workDir = join(ROOT, '.tmp', `client-${crypto.randomUUID()}`)
  mkdirSync(workDir, { recursive: true })
})
afterAll(async () => {
  await server.stop()
  if (workDir) rmSync(workDir, { recursive: true, force: true })
})

function operations(d: Document) {
  const out: { method: string; path: string; op: Operation }[] = []
  for (const [path, item] of Object.entries(d.paths)) {
    for (const method of METHODS) {
      const op = item[method]
      if (op) out.push({ method: method.toUpperCase(), path, op })
    }
  }
  return out
}

/** Every object schema inside `schema` (through properties, items and compositions). */
function objectSchemas(schema: Schema | undefined, at: string, out: { at: string; schema: Schema }[] = []): { at: string; schema: Schema }[] {
  if (!schema || typeof schema !== 'object') return out
  if (schema.properties) out.push({ at, schema })
  for (const [name, prop] of Object.entries(schema.properties ?? {})) objectSchemas(prop, `${at}.${name}`, out)
  if (schema.items) objectSchemas(schema.items, `${at}[]`, out)
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const [i, sub] of (schema[key] ?? []).entries()) objectSchemas(sub, `${at}<${key}${i}>`, out)
  if (typeof schema.additionalProperties === 'object') objectSchemas(schema.additionalProperties, `${at}{}`, out)
  return out
}

const CLIENT_MODULE = `import createClient from 'openapi-fetch'
import type { components, paths } from './api'

type Account = components['schemas']['Account']
type Transaction = components['schemas']['Transaction']
type Problem = components['schemas']['Problem']

// The generated types are real types, not \`any\`: each of these lines must be a type error.
// @ts-expect-error 'savings' is not an account type
const badType: components['schemas']['AccountCreate'] = { name: 'x', type: 'savings', balance: 1, currency: 'EUR' }
// @ts-expect-error 'date' is required on TransactionCreate
const missingDate: components['schemas']['TransactionCreate'] = { accountId: 'acct_x', amount: 1 }
// @ts-expect-error response fields are required, and amount is a number
const wrongAmount: Transaction = { id: 'txn_x', amount: '1' }
export const typeProbes = [badType, missingDate, wrongAmount]

export interface RunResult {
  account: Account
  transaction: Transaction
  accounts: Account[]
  transactions: Transaction[]
  filtered: Transaction[]
  hasMore: boolean
  nextCursor: string | null
  replayed: string | null
  status: number
  notFound: Problem | undefined
  balance: number
}

export async function run(baseUrl: string, apiKey: string): Promise<RunResult> {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${apiKey}\` } })

  const createdAccount = await client.POST('/v1/accounts', {
    params: { header: { 'Idempotency-Key': crypto.randomUUID() } },
    body: { name: 'Generated wallet', type: 'physical', balance: 100, currency: 'EUR', customFields: [{ label: 'k', value: 'v' }] },
  })
  if (!createdAccount.data) throw new Error(\`account: \${createdAccount.response.status} \${JSON.stringify(createdAccount.error)}\`)
  const account: Account = createdAccount.data.data

  const idempotencyKey = crypto.randomUUID()
  const txnBody = { accountId: account.id, amount: 12.5, date: '2026-11-21', time: '14:30', payeeName: 'Generated Shop', note: 'typed' }
  const createdTxn = await client.POST('/v1/transactions', { params: { header: { 'Idempotency-Key': idempotencyKey } }, body: txnBody })
  if (!createdTxn.data) throw new Error(\`transaction: \${createdTxn.response.status} \${JSON.stringify(createdTxn.error)}\`)
  const transaction: Transaction = createdTxn.data.data
  const replay = await client.POST('/v1/transactions', { params: { header: { 'Idempotency-Key': idempotencyKey } }, body: txnBody })

  const accountList = await client.GET('/v1/accounts', { params: { query: { limit: 10 } } })
  const txnList = await client.GET('/v1/transactions', { params: { query: { limit: 10 } } })
  const filteredList = await client.GET('/v1/transactions', { params: { query: { accountId: account.id, from: '2026-11-21', to: '2026-11-21' } } })
  if (!accountList.data || !txnList.data || !filteredList.data) throw new Error('list failed')

  const missing = await client.GET('/v1/transactions/{transactionId}', { params: { path: { transactionId: 'txn_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b' } } })
  const fresh = await client.GET('/v1/accounts/{accountId}', { params: { path: { accountId: account.id } } })
  if (!fresh.data) throw new Error('account get failed')
  const balance: number = fresh.data.data.balance

  return {
    account,
    transaction,
    accounts: accountList.data.data,
    transactions: txnList.data.data,
    filtered: filteredList.data.data,
    hasMore: txnList.data.hasMore,
    nextCursor: txnList.data.nextCursor,
    replayed: replay.response.headers.get('Idempotent-Replayed'),
    status: createdTxn.response.status,
    notFound: missing.error,
    balance,
  }
}
`

describe('a client generated from /openapi.json', () => {
  test('type-checks (strict) and creates and lists an account and a transaction against a real server', async () => {
    const ast = await openapiTS(raw as never)
    const types = astToString(ast)
    expect(types).toContain('"/v1/transactions"')
    writeFileSync(join(workDir, 'api.ts'), types)
    writeFileSync(join(workDir, 'client.ts'), CLIENT_MODULE)
    writeFileSync(
      join(workDir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'Bundler',
          lib: ['ES2022', 'DOM', 'DOM.Iterable'],
          types: [],
          strict: true,
          noUncheckedIndexedAccess: true,
          noImplicitOverride: true,
          noUnusedLocals: false,
          noEmit: true,
          skipLibCheck: true,
        },
        files: ['api.ts', 'client.ts'],
      }),
    )
    const tsc = Bun.spawn(['bunx', 'tsc', '--noEmit', '-p', join(workDir, 'tsconfig.json')], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
    const [out, err, code] = await Promise.all([new Response(tsc.stdout).text(), new Response(tsc.stderr).text(), tsc.exited])
    if (code !== 0) throw new Error(`the generated client does not type-check:\n${out}${err}`)

    const owner = await server.owner()
    const client = (await import(join(workDir, 'client.ts'))) as { run: (url: string, key: string) => Promise<Record<string, unknown>> }
    // biome-ignore lint/suspicious/noExplicitAny: the run result is checked field by field
    const result: any = await client.run(server.url, owner.key)
    expect(result.account).toMatchObject({
      name: 'Generated wallet',
      type: 'physical',
      balance: 100,
      currency: 'EUR',
      customFields: [{ label: 'k', value: 'v' }],
    })
    expect(result.status).toBe(201)
    expect(result.transaction).toMatchObject({
      accountId: result.account.id,
      amount: 12.5,
      date: '2026-11-21',
      time: '14:30',
      note: 'typed',
      isTransfer: false,
    })
    expect(result.transaction.payeeId).toMatch(/^pay_/)
    expect(result.replayed).toBe('true')
    // The transaction moved the balance: a change of the account (CONTRACT §25).
    expect(result.accounts).toEqual([{ ...result.account, balance: 87.5, updatedAt: result.accounts[0].updatedAt }])
    expect(result.accounts[0].updatedAt).toBeGreaterThanOrEqual(result.account.updatedAt)
    expect(result.transactions).toEqual([result.transaction])
    expect(result.filtered).toEqual([result.transaction])
    expect(result.hasMore).toBe(false)
    expect(result.nextCursor).toBeNull()
    expect(result.notFound).toMatchObject({ code: 'not_found', status: 404 })
    expect(result.balance).toBe(87.5)
  }, 60_000)
})

describe('what the generated client relies on in the document', () => {
  const SPEC_PATHS: Record<string, string[]> = {
    '/v1/me': ['GET'],
    '/v1/agent/context': ['GET'],
    '/v1/accounts': ['GET', 'POST'],
    '/v1/accounts/{accountId}': ['GET', 'PATCH', 'DELETE'],
    '/v1/accounts/upsert': ['POST'],
    '/v1/transactions': ['GET', 'POST'],
    '/v1/transactions/{transactionId}': ['GET', 'PATCH', 'DELETE'],
    '/v1/transactions/upsert': ['POST'],
    '/v1/categories': ['GET', 'POST'],
    '/v1/categories/{categoryId}': ['GET', 'PATCH', 'DELETE'],
    '/v1/categories/upsert': ['POST'],
    '/v1/payees': ['GET', 'POST'],
    '/v1/payees/{payeeId}': ['GET', 'PATCH'],
    '/v1/payees/upsert': ['POST'],
    // Beyond SPEC §4, from CONTRACT §15, §16, §22 and §23, §27.
    '/v1/changes': ['GET'],
    '/v1/transactions/batch': ['POST'],
    '/v1/tags': ['GET', 'POST'],
    '/v1/tags/{tagId}': ['GET', 'PATCH', 'DELETE'],
    '/v1/tags/upsert': ['POST'],
    '/v1/transactions/bulk-update': ['POST'],
    '/v1/reports/spending': ['GET'],
    '/v1/rules': ['GET', 'POST'],
    '/v1/rules/{ruleId}': ['GET', 'PATCH', 'DELETE'],
    '/v1/rules/upsert': ['POST'],
    '/v1/rules/test': ['POST'],
    '/v1/rules/{ruleId}/apply': ['POST'],
    '/v1/budgets': ['GET'],
    '/v1/budgets/{month}': ['GET', 'PUT'],
    '/v1/budgets/{month}/categories/{categoryId}': ['PUT'],
    '/v1/accounts/{accountId}/imports': ['POST'],
    '/v1/import-presets': ['GET', 'POST'],
    '/v1/import-presets/{presetId}': ['GET', 'PATCH', 'DELETE'],
    '/v1/keys': ['GET', 'POST'],
    '/v1/keys/{keyId}': ['GET', 'DELETE'],
    '/v1/me/subjects': ['GET'],
    '/v1/grants': ['GET', 'POST'],
    '/v1/grants/{grantId}': ['DELETE'],
    // CONTRACT §29.
    '/v1/schedules': ['GET', 'POST'],
    '/v1/schedules/{scheduleId}': ['GET', 'PATCH', 'DELETE'],
    '/v1/schedules/upsert': ['POST'],
    '/v1/schedules/upcoming': ['GET'],
    '/v1/schedules/{scheduleId}/occurrences': ['GET'],
    '/v1/schedules/{scheduleId}/skip': ['POST'],
    '/openapi.json': ['GET'],
  }

  test('OpenAPI 3.x, version 1.0.0-alpha', () => {
    expect(raw.openapi).toMatch(/^3\./)
    expect(raw.info.version).toBe('1.0.0-alpha')
  })

  test('every path of SPEC §4 (and of CONTRACT §15, §16, §22, §23, §24, §26, §27, §28, §29, §30) is present with exactly its methods', () => {
    const problems: string[] = []
    for (const [path, methods] of Object.entries(SPEC_PATHS)) {
      const item = doc.paths[path]
      if (!item) {
        problems.push(`missing ${path}`)
        continue
      }
      const present = METHODS.filter((m) => item[m]).map((m) => m.toUpperCase())
      if (path.startsWith('/v1') ? present.sort().join() !== [...methods].sort().join() : !methods.every((m) => present.includes(m))) {
        problems.push(`${path}: ${present.join(',')} (expected ${methods.join(',')})`)
      }
    }
    // and no /v1 path that SPEC §4 does not list
    for (const path of Object.keys(doc.paths)) if (path.startsWith('/v1') && !SPEC_PATHS[path]) problems.push(`unexpected ${path}`)
    expect(problems).toEqual([])
  })

  test('path parameters are declared, required, for every templated path', () => {
    const problems: string[] = []
    for (const { method, path, op } of operations(doc)) {
      for (const [, name] of path.matchAll(/\{(\w+)\}/g)) {
        const param = op.parameters?.find((p) => p.in === 'path' && p.name === name)
        if (!param?.required) problems.push(`${method} ${path}: path parameter ${name}`)
      }
      if (method === 'POST' || method === 'PATCH') {
        const key = op.parameters?.find((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key')
        if (!key?.required) problems.push(`${method} ${path}: Idempotency-Key header parameter`)
      }
      // A PUT takes the key when sent (CONTRACT §8): declared, not required.
      if (method === 'PUT') {
        const key = op.parameters?.find((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key')
        if (!key || key.required) problems.push(`${method} ${path}: an optional Idempotency-Key header parameter`)
      }
    }
    expect(problems).toEqual([])
  })

  test('every operation has a unique operationId', () => {
    const ids = operations(doc).map(({ method, path, op }) => op.operationId ?? `(none: ${method} ${path})`)
    expect(ids.filter((id) => id.startsWith('(none'))).toEqual([])
    expect(new Set(ids).size).toBe(ids.length)
  })

  test('request bodies are objects with additionalProperties: false (nested objects too)', () => {
    const problems: string[] = []
    for (const { method, path, op } of operations(doc)) {
      if (!op.requestBody) continue
      const schema = op.requestBody.content['application/json']?.schema
      if (!schema) {
        problems.push(`${method} ${path}: no application/json body schema`)
        continue
      }
      if (schema.type !== 'object') problems.push(`${method} ${path}: body type ${schema.type}`)
      for (const { at, schema: obj } of objectSchemas(schema, 'body')) {
        if (obj.additionalProperties !== false) problems.push(`${method} ${path}: ${at} additionalProperties ${JSON.stringify(obj.additionalProperties)}`)
      }
    }
    expect(problems).toEqual([])
  })

  test('every response object schema lists all its fields as required', () => {
    const problems: string[] = []
    for (const { method, path, op } of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          if (!type.includes('json')) continue
          if (path === '/openapi.json') continue // the document itself is free-form
          for (const { at, schema } of objectSchemas(media.schema, `${status} ${type}`)) {
            const fields = Object.keys(schema.properties ?? {}).sort()
            const required = [...(schema.required ?? [])].sort()
            if (fields.join() !== required.join()) problems.push(`${method} ${path} ${at}: required ${required.join(',')} vs fields ${fields.join(',')}`)
          }
        }
      }
    }
    expect(problems).toEqual([])
  })

  test('success statuses are as CONTRACT §5', () => {
    const problems: string[] = []
    for (const { method, path, op } of operations(doc)) {
      if (!path.startsWith('/v1')) continue
      const success = Object.keys(op.responses)
        .filter((s) => s.startsWith('2'))
        .sort()
      // The batch import, the bulk update, the rule runs and a statement import answer 200 with a report (CONTRACT §16, §26, §23, §24): they create nothing of their own.
      // A skip marks one occurrence of a schedule (CONTRACT §29): it creates nothing either.
      const reports = [
        '/v1/schedules/{scheduleId}/skip',
        '/v1/transactions/batch',
        '/v1/transactions/bulk-update',
        '/v1/rules/test',
        '/v1/rules/{ruleId}/apply',
        '/v1/accounts/{accountId}/imports',
      ]
      const expected = method === 'POST' && !reports.includes(path) ? (path.endsWith('/upsert') ? ['200', '201'] : ['201']) : ['200']
      if (success.join() !== expected.join()) problems.push(`${method} ${path}: ${success.join(',')} (expected ${expected.join(',')})`)
      // and every operation documents its error responses as problem+json
      const errors = Object.entries(op.responses).filter(([s]) => /^[45]/.test(s))
      if (errors.length === 0) problems.push(`${method} ${path}: no error responses`)
      for (const [status, response] of errors)
        if (!response.content?.['application/problem+json']) problems.push(`${method} ${path} ${status}: not problem+json`)
    }
    expect(problems).toEqual([])
  })

  test('each operation with a body has an example that fits its schema', () => {
    const problems: string[] = []
    for (const { method, path, op } of operations(doc)) {
      if (!op.requestBody) continue
      const media = op.requestBody.content['application/json']
      const examples = [media?.example, ...Object.values(media?.examples ?? {}).map((e) => e.value), media?.schema?.example].filter((e) => e !== undefined)
      if (examples.length === 0) {
        problems.push(`${method} ${path}: no example`)
        continue
      }
      const schema = media?.schema as Schema
      for (const example of examples) {
        if (example === null || typeof example !== 'object') {
          problems.push(`${method} ${path}: example is not an object`)
          continue
        }
        const keys = Object.keys(example)
        const unknown = keys.filter((k) => !(k in (schema.properties ?? {})))
        const missing = (schema.required ?? []).filter((k) => !keys.includes(k))
        if (unknown.length) problems.push(`${method} ${path}: example has unknown fields ${unknown.join(',')}`)
        if (missing.length) problems.push(`${method} ${path}: example lacks required ${missing.join(',')}`)
      }
    }
    expect(problems).toEqual([])
  })
})
