import { afterAll, describe, expect, test } from 'bun:test'
import { readdirSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { createKey, createOwner } from '../../src/cli/admin.ts'
import { closePlatform, createPlatform } from '../../src/server.ts'
import { loadConfig } from '../../src/config.ts'
import { startTestServer, tempDir } from '../support/harness.ts'
import { awaitListening } from '../support/processes.ts'

/**
 * CONTRACT §14 "bounded resources": open owner databases never exceed TENANT_CACHE_SIZE, an
 * evicted one gives back its descriptors at once, and running out of descriptors anyway is
 * survived rather than answered with 500s until a restart.
 */

const REPO = resolve(import.meta.dir, '../..')
const openDescriptors = (pid: number | 'self' = 'self') => readdirSync(`/proc/${pid}/fd`).length
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** Owners with one key each, made straight in a DATA_DIR (as `owner create` and `key create` do). */
async function makeOwners(dataDir: string, count: number): Promise<string[]> {
  const platform = createPlatform(loadConfig({ DATA_DIR: dataDir, TENANT_CACHE_SIZE: '2' }), () => {})
  try {
    const keys: string[] = []
    for (let i = 0; i < count; i++) {
      const owner = createOwner(platform.control, platform.tenants, {
        name: `Owner ${i}`,
        email: null,
        country: null,
        defaultCurrency: null,
        preferredLanguage: null,
      })
      keys.push((await createKey(platform.control, { ownerId: owner.id })).key)
    }
    return keys
  } finally {
    closePlatform(platform)
  }
}

describe('many owners through a small tenant cache', () => {
  test('descriptors stay bounded by TENANT_CACHE_SIZE however many owners are touched', async () => {
    const dataDir = tempDir('pfin-owners-')
    dirs.push(dataDir)
    const keys = await makeOwners(dataDir, 50)
    const server = await startTestServer({ dataDir, env: { TENANT_CACHE_SIZE: '4', RATE_LIMIT_PER_MINUTE: '100000' } })
    try {
      const before = openDescriptors()
      let peak = before
      for (const [index, key] of keys.entries()) {
        const res = await server.request(index % 2 ? 'POST' : 'GET', '/v1/accounts', {
          key,
          body: index % 2 ? { name: 'Main', type: 'bank', balance: 1, currency: 'EUR' } : undefined,
        })
        expect(res.status).toBe(index % 2 ? 201 : 200)
        peak = Math.max(peak, openDescriptors())
      }
      expect(server.platform.tenants.size).toBe(4)
      // Three descriptors per open owner file (db, -wal, -shm) at most, plus a little slack for sockets.
      expect(peak - before).toBeLessThanOrEqual(4 * 3 + 8)
    } finally {
      await server.stop({ remove: false })
    }
  }, 60_000)

  test('a server whose descriptor limit is below what the cache could hold keeps answering (no 500) as owners pile up', async () => {
    const dataDir = tempDir('pfin-fdlimit-')
    dirs.push(dataDir)
    const keys = await makeOwners(dataDir, 40)
    const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', TENANT_CACHE_SIZE: '256', RATE_LIMIT_PER_MINUTE: '100000' }
    // 64 descriptors: Bun and the control database take about half; 40 owner files need 120.
    const proc = Bun.spawn(['sh', '-c', `ulimit -n 64 && exec "${process.execPath}" src/main.ts serve`], { cwd: REPO, env, stdout: 'pipe', stderr: 'pipe' })
    try {
      const url = await awaitListening(proc.stdout, 15_000)
      const statuses: number[] = []
      for (let round = 0; round < 2; round++) {
        for (const key of keys) {
          const res = await fetch(`${url}/v1/accounts`, { headers: { authorization: `Bearer ${key}` } })
          await res.arrayBuffer()
          statuses.push(res.status)
        }
      }
      expect(statuses.filter((status) => status !== 200)).toEqual([])
      expect(openDescriptors(proc.pid)).toBeLessThanOrEqual(64)
    } finally {
      proc.kill('SIGKILL')
      await proc.exited
    }
  }, 60_000)
})
