import { afterEach, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { loadConfig } from '../../src/config.ts'
import { routes } from '../../src/modules/index.ts'
import { buildOperation, DeferredOperations } from '../../src/platform/openapi.ts'
import { closePlatform, createApp, createPlatform, listen } from '../../src/server.ts'
import { tempDir } from '../support/harness.ts'

/**
 * The routes' OpenAPI operations are built on the document's first request, not at start-up
 * (a faster start), and the document they make is the one built eagerly.
 */

const getMe = routes.find((route) => route.operationId === 'getMe')
if (!getMe) throw new Error('no getMe route')
const spec = { ...getMe, errors: getMe.errors ?? [] }

describe('DeferredOperations', () => {
  test('hands out an empty detail, filled in place by complete() with what buildOperation makes', () => {
    const components: Record<string, unknown> = {}
    const operations = new DeferredOperations(components)
    const detail = operations.detailFor(spec)
    expect(detail).toEqual({})
    expect(components).toEqual({})

    operations.complete()
    const eagerComponents: Record<string, unknown> = {}
    expect(detail).toEqual(buildOperation(spec, eagerComponents))
    expect(components).toEqual(eagerComponents)
    expect(detail.operationId).toBe('getMe')
  })

  test('complete() builds each operation once', () => {
    const operations = new DeferredOperations({})
    const detail = operations.detailFor(spec)
    operations.complete()
    const built = detail.responses
    operations.complete()
    expect(detail.responses).toBe(built)
  })
})

describe('a server', () => {
  const cleanups: (() => void)[] = []
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup()
  })

  test('builds no operation before /openapi.json is asked for, and a complete document on the first request', async () => {
    const dataDir = tempDir()
    const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'off' })
    const platform = createPlatform(config, () => {})
    const app = createApp(platform)
    const server = listen(app, config)
    cleanups.push(() => {
      server.stop(true)
      closePlatform(platform)
      rmSync(dataDir, { recursive: true, force: true })
    })
    const url = `http://127.0.0.1:${server.port}`
    const detailOf = (path: string, method: string) => app.routes.find((route) => route.path === path && route.method === method)?.hooks?.detail

    expect((await fetch(`${url}/healthz`)).status).toBe(200)
    expect(detailOf('/v1/me', 'GET')).toEqual({})
    expect(detailOf('/v1/transactions/batch', 'POST')).toEqual({})

    const response = await fetch(`${url}/openapi.json`)
    expect(response.status).toBe(200)
    const document = (await response.json()) as {
      paths: Record<string, Record<string, { operationId?: string }>>
      components: { schemas: Record<string, unknown> }
    }
    for (const route of routes) {
      const operation = document.paths[route.path.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase()]
      expect(operation?.operationId).toBe(route.operationId)
    }
    expect(detailOf('/v1/me', 'GET')).toMatchObject({ operationId: 'getMe' })
    // Components named by the operations (not only the Problem schema made at start).
    expect(Object.keys(document.components.schemas)).toContain('TransactionBatch')
  })
})
