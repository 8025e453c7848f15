import SwaggerParser from '@apidevtools/swagger-parser'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { routes as v1Routes } from '../../src/modules/index.ts'
import { RATE_LIMIT_HEADERS, startTestServer, type TestResponse, type TestServer } from '../support/harness.ts'
import { makeFixture } from './fixtures.ts'

/** CONTRACT §12: /openapi.json is a valid OpenAPI 3 document and true to the server. */

/** Routes that need no key and are not counted (CONTRACT §5, §7). */
const KEYLESS = new Set(['/healthz', '/openapi.json', '/docs'])

interface Schema {
  type?: string
  format?: string
  properties?: Record<string, Schema>
  required?: string[]
  additionalProperties?: boolean | Schema
  $ref?: string
  [key: string]: unknown
}
interface Header {
  schema?: Schema
  $ref?: string
}
interface Parameter {
  name: string
  in: string
  required?: boolean
  schema?: Schema
}
interface ResponseObject {
  description: string
  headers?: Record<string, Header>
  content?: Record<string, { schema?: Schema }>
}
interface Operation {
  operationId?: string
  security?: Record<string, string[]>[]
  parameters?: Parameter[]
  requestBody?: { required?: boolean; content: Record<string, { schema?: Schema }> }
  responses: Record<string, ResponseObject>
}
interface Document {
  openapi: string
  info: { version: string; title: string }
  paths: Record<string, Record<string, Operation>>
  components: { securitySchemes?: Record<string, { type: string; scheme?: string }>; schemas?: Record<string, Schema> }
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const

function operations(doc: Document): { method: string; path: string; op: Operation }[] {
  const out: { method: string; path: string; op: Operation }[] = []
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method]
      if (op) out.push({ method: method.toUpperCase(), path, op })
    }
  }
  return out
}

const fixture = makeFixture()
const allRoutes = [...v1Routes, ...fixture.routes]
let server: TestServer
let res: TestResponse
/** The document as served. */
let raw: Document
/** The document with every $ref resolved. */
let doc: Document

beforeAll(async () => {
  server = await startTestServer({ extraRoutes: fixture.routes })
  res = await server.request('GET', '/openapi.json')
  raw = res.json
  doc = (await SwaggerParser.dereference(structuredClone(raw) as never)) as unknown as Document
})
afterAll(() => server.stop())

describe('/openapi.json', () => {
  test('is served without a key, as JSON, with the response headers', () => {
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('application/json')
    expect(res.headers.get('x-request-id')).toBeTruthy()
    for (const name of RATE_LIMIT_HEADERS) expect(res.headers.has(name)).toBe(true)
  })

  test('passes @apidevtools/swagger-parser validation', async () => {
    await SwaggerParser.validate(structuredClone(raw) as never)
  })

  test('the validator is live: broken copies are rejected', async () => {
    const badIn = structuredClone(raw)
    const param = badIn.paths['/v1/test-items/{itemId}']?.patch?.parameters?.find((p) => p.in === 'path')
    expect(param).toBeDefined()
    if (param) param.in = 'body'
    await expect(SwaggerParser.validate(badIn as never)).rejects.toThrow(/in/)
    const badRef = structuredClone(raw)
    const ok = badRef.paths['/v1/me']?.get?.responses['200']?.content?.['application/json']
    if (ok) ok.schema = { $ref: '#/components/schemas/DoesNotExist' }
    await expect(SwaggerParser.validate(badRef as never)).rejects.toThrow(/DoesNotExist/)
  })

  // swagger-parser checks an OpenAPI 3.1 document against the schema only; these are its 2.0-only semantic checks.
  test('path templates and path parameters agree; operationIds are unique', () => {
    const ids = new Map<string, string>()
    for (const { method, path, op } of operations(doc)) {
      const at = `${method} ${path}`
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string).sort()
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path')
      expect({ at, params: declared.map((p) => p.name).sort() }).toEqual({ at, params: templated })
      for (const p of declared) expect({ at, name: p.name, required: p.required }).toEqual({ at, name: p.name, required: true })
      expect({ at, operationId: typeof op.operationId }).toEqual({ at, operationId: 'string' })
      const id = op.operationId as string
      expect({ at, duplicateOf: ids.get(id) }).toEqual({ at, duplicateOf: undefined })
      ids.set(id, at)
    }
  })

  test('is OpenAPI 3.x, version 1.0.0-alpha', () => {
    expect(raw.openapi).toStartWith('3.')
    expect(raw.info.version).toBe('1.0.0-alpha')
    expect(raw.info.title.length).toBeGreaterThan(0)
  })

  test('documents every mounted route with its method, OpenAPI-style path templates', () => {
    const documented = new Set(operations(doc).map(({ method, path }) => `${method} ${path}`))
    for (const route of allRoutes) {
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
      expect(documented.has(`${route.method} ${path}`)).toBe(true)
    }
    expect(documented.has('GET /healthz')).toBe(true)
    for (const path of Object.keys(doc.paths)) expect(path).not.toContain(':')
  })

  test('has the bearer security scheme, required by every route but the keyless system routes', () => {
    const schemes = Object.entries(raw.components.securitySchemes ?? {}).filter(([, s]) => s.type === 'http' && s.scheme?.toLowerCase() === 'bearer')
    expect(schemes).toHaveLength(1)
    const [bearer] = schemes[0] as [string, unknown]
    for (const { method, path, op } of operations(doc)) {
      // One requirement, or alternatives (any one scope of several will do): all of the bearer scheme.
      const names = [...new Set((op.security ?? []).flatMap((requirement) => Object.keys(requirement)))]
      if (KEYLESS.has(path)) expect(names).toEqual([])
      else expect({ at: `${method} ${path}`, names }).toEqual({ at: `${method} ${path}`, names: [bearer] })
    }
  })

  test('every POST and PATCH has the required Idempotency-Key header parameter', () => {
    const writes = operations(doc).filter(({ method }) => method === 'POST' || method === 'PATCH')
    expect(writes.length).toBeGreaterThanOrEqual(fixture.routes.filter((r) => r.method !== 'GET').length)
    for (const { method, path, op } of writes) {
      const param = (op.parameters ?? []).find((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key')
      expect({ at: `${method} ${path}`, required: param?.required, maxLength: param?.schema?.maxLength }).toEqual({
        at: `${method} ${path}`,
        required: true,
        maxLength: 255,
      })
    }
  })

  test('every response of every operation declares X-Request-Id and the six rate-limit headers', () => {
    const wanted = ['x-request-id', ...RATE_LIMIT_HEADERS]
    const problems: string[] = []
    for (const { method, path, op } of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        const names = Object.keys(response.headers ?? {}).map((n) => n.toLowerCase())
        const missing = wanted.filter((name) => !names.includes(name))
        if (missing.length) problems.push(`${method} ${path} ${status}: missing ${missing.join(', ')}`)
      }
    }
    expect(problems).toEqual([])
  })

  test('429 responses declare Retry-After, 401 responses WWW-Authenticate, 201 responses Location', () => {
    for (const { method, path, op } of operations(doc)) {
      if (KEYLESS.has(path)) continue
      const at = `${method} ${path}`
      const headerNames = (status: string) => Object.keys(op.responses[status]?.headers ?? {}).map((n) => n.toLowerCase())
      expect({ at, has429: '429' in op.responses, has401: '401' in op.responses }).toEqual({ at, has429: true, has401: true })
      expect({ at, h: headerNames('429') }).toEqual({ at, h: expect.arrayContaining(['retry-after']) })
      expect({ at, h: headerNames('401') }).toEqual({ at, h: expect.arrayContaining(['www-authenticate']) })
      if ('201' in op.responses) expect({ at, h: headerNames('201') }).toEqual({ at, h: expect.arrayContaining(['location']) })
    }
  })

  test('error responses are application/problem+json with the Problem schema', () => {
    const problem = doc.components.schemas?.Problem
    expect(problem?.required?.slice().sort()).toEqual(['code', 'detail', 'request_id', 'status', 'title', 'type'])
    expect(problem?.additionalProperties).toBe(false)
    let count = 0
    for (const { method, path, op } of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (status !== 'default' && Number(status) < 400) continue
        count += 1
        expect({ at: `${method} ${path} ${status}`, types: Object.keys(response.content ?? {}) }).toEqual({
          at: `${method} ${path} ${status}`,
          types: ['application/problem+json'],
        })
        const schema = response.content?.['application/problem+json']?.schema
        expect(schema?.required?.slice().sort()).toEqual(['code', 'detail', 'request_id', 'status', 'title', 'type'])
      }
    }
    expect(count).toBeGreaterThan(0)
  })

  test('request bodies are required JSON objects with additionalProperties: false (an import may be the file itself, CONTRACT §24)', () => {
    const withBody = operations(doc).filter(({ op }) => op.requestBody)
    expect(withBody.length).toBeGreaterThan(0)
    for (const { method, path, op } of withBody) {
      const content = op.requestBody?.content ?? {}
      const schema = content['application/json']?.schema
      expect({
        at: `${method} ${path}`,
        required: op.requestBody?.required,
        types: Object.keys(content),
        type: schema?.type,
        additional: schema?.additionalProperties,
      }).toEqual({
        at: `${method} ${path}`,
        required: true,
        types: path.endsWith('/imports') ? ['application/octet-stream', 'application/json'] : ['application/json'],
        type: 'object',
        additional: false,
      })
    }
  })

  test('no schema uses Elysia’s lenient numeric strings (t.Integer / t.Numeric accept "12" as a number)', () => {
    const lenient: string[] = []
    const walk = (node: unknown, where: string) => {
      if (Array.isArray(node)) {
        for (const [i, child] of node.entries()) walk(child, `${where}[${i}]`)
        return
      }
      if (!node || typeof node !== 'object') return
      const record = node as Record<string, unknown>
      if (record.type === 'string' && (record.format === 'integer' || record.format === 'numeric' || record.format === 'boolean')) lenient.push(where)
      for (const [key, child] of Object.entries(record)) walk(child, `${where}.${key}`)
    }
    walk(raw, '$')
    expect(lenient).toEqual([])
  })

  test('the documented GET /v1/me response matches what the server returns', async () => {
    const owner = await server.owner({ name: 'Doc', country: 'PT' })
    const me = await server.request('GET', '/v1/me', { key: owner.key })
    expect(me.status).toBe(200)
    const schema = doc.paths['/v1/me']?.get?.responses['200']?.content?.['application/json']?.schema
    const data = schema?.properties?.data
    expect(schema?.required).toEqual(['data'])
    expect(data?.additionalProperties).toBe(false)
    expect(data?.required?.slice().sort()).toEqual(Object.keys(me.json.data).sort())
  })
})

describe('/docs', () => {
  test('serves an HTML page that loads /openapi.json, without a key', async () => {
    const page = await server.request('GET', '/docs')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toStartWith('text/html')
    expect(page.text.toLowerCase()).toContain('<html')
    // The UI fetches the document relative to /docs, i.e. /openapi.json.
    expect(new URL(page.text.match(/data-url="([^"]+)"/)?.[1] ?? 'missing', `${server.url}/docs`).pathname).toBe('/openapi.json')
  })
})
