import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DataDirError } from '../../src/db/data-dir.ts'
import { loadConfig } from '../../src/config.ts'
import { createPlatform } from '../../src/server.ts'
import { expectProblem, sendRaw, startTestServer } from '../support/harness.ts'
import { adminJson, cleanup, MAIN, processEnv, ROOT, startServer, tempDir } from '../support/processes.ts'

/** `serve` as a self-hoster meets it (CONTRACT §14): one server per port and per DATA_DIR, private files, an unusable DATA_DIR named, oversized bodies answered 413. */

afterAll(cleanup)

/** Runs `bun src/main.ts serve` expecting it to refuse to start; returns its exit code and stderr. */
async function refusedServe(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const proc = Bun.spawn(['bun', MAIN, 'serve'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000)
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
  clearTimeout(timer)
  return { code, stderr }
}

const mode = (path: string) => statSync(path).mode & 0o777

describe('one server per port and per DATA_DIR', () => {
  test('a second server on a port in use exits 1 with a message naming the port, and never shares it', async () => {
    const first = await startServer(processEnv(tempDir('pfin-port-a-')))
    const port = new URL(first.url).port
    const second = await refusedServe(processEnv(tempDir('pfin-port-b-'), { PORT: port }))
    expect(second.code).toBe(1)
    expect(second.stderr).toContain(`port ${port}`)
    expect(second.stderr).toContain('PORT')
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200)
  }, 30_000)

  test('a second server on a DATA_DIR in use exits 1 naming DATA_DIR; once the first is gone it starts', async () => {
    const dataDir = tempDir('pfin-lock-')
    const first = await startServer(processEnv(dataDir))
    const second = await refusedServe(processEnv(dataDir))
    expect(second.code).toBe(1)
    expect(second.stderr).toContain('DATA_DIR')
    expect(second.stderr).toContain(dataDir)
    // A crash (SIGKILL) leaves no stale claim behind: the operating system drops the lock.
    first.proc.kill('SIGKILL')
    await first.proc.exited
    const third = await startServer(processEnv(dataDir))
    expect((await fetch(`${third.url}/healthz`)).status).toBe(200)
  }, 30_000)

  test('a server started on an existing server.lock (its own, or an older version’s) holds it as firmly', async () => {
    // The claim writes only to a new file; on an existing one the lock comes from BEGIN
    // EXCLUSIVE alone, kept past its empty commit by the locking mode.
    const dataDir = tempDir('pfin-relock-')
    mkdirSync(dataDir, { recursive: true })
    const old = new Database(join(dataDir, 'server.lock'), { create: true })
    old.run('CREATE TABLE holder (pid INTEGER NOT NULL, started_at INTEGER NOT NULL)')
    old.run('INSERT INTO holder (pid, started_at) VALUES (1, 0)')
    old.close()
    for (let start = 1; start <= 2; start++) {
      const server = await startServer(processEnv(dataDir))
      const second = await refusedServe(processEnv(dataDir))
      expect({ start, code: second.code }).toEqual({ start, code: 1 })
      expect(second.stderr).toContain('DATA_DIR')
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
      server.proc.kill('SIGKILL')
      await server.proc.exited
    }
  }, 30_000)

  test('in one process too, a second platform on the same DATA_DIR is refused', async () => {
    const server = await startTestServer()
    try {
      expect(() => createPlatform(loadConfig({ DATA_DIR: server.dataDir }), () => {})).toThrow(DataDirError)
    } finally {
      await server.stop()
    }
  })
})

describe('files are private', () => {
  test('DATA_DIR is created 0700 and every database file 0600', async () => {
    const dataDir = join(tempDir('pfin-modes-'), 'fresh')
    const env = processEnv(dataDir)
    const { id } = await adminJson(env, 'owner', 'create', '--name', 'Ana')
    const server = await startServer(env)
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    expect(mode(dataDir)).toBe(0o700)
    expect(mode(join(dataDir, 'tenants'))).toBe(0o700)
    for (const file of ['control.db', 'control.db-wal', 'control.db-shm', `tenants/${id}.db`, 'server.lock']) {
      expect({ file, mode: mode(join(dataDir, file)).toString(8) }).toEqual({ file, mode: '600' })
    }
  }, 30_000)

  test('a DATA_DIR left world-readable by an older version is narrowed on start', async () => {
    const dataDir = tempDir('pfin-oldmodes-')
    const env = processEnv(dataDir)
    const { id } = await adminJson(env, 'owner', 'create', '--name', 'Ana')
    chmodSync(dataDir, 0o755)
    chmodSync(join(dataDir, 'control.db'), 0o644)
    chmodSync(join(dataDir, 'tenants', `${id}.db`), 0o644)
    await adminJson(env, 'owner', 'export', '--owner', String(id), '--out', join(tempDir('pfin-export-'), 'x.db'))
    expect(mode(dataDir)).toBe(0o700)
    expect(mode(join(dataDir, 'control.db'))).toBe(0o600)
    expect(mode(join(dataDir, 'tenants', `${id}.db`))).toBe(0o600)
  }, 30_000)
})

describe('an unusable DATA_DIR', () => {
  test('is refused with a message naming the path, DATA_DIR and what to do', async () => {
    const parent = tempDir('pfin-notdir-')
    const file = join(parent, 'a-file')
    writeFileSync(file, 'not a folder')
    const dataDir = join(file, 'data')
    const result = await refusedServe(processEnv(dataDir))
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(dataDir)
    expect(result.stderr).toContain('DATA_DIR')
    expect(result.stderr).not.toContain('unable to open database file')
    // The same for admin commands that would create it (a failure while running, exit 1)…
    const admin = Bun.spawnSync(['bun', MAIN, 'owner', 'create', '--name', 'Ana'], { cwd: ROOT, env: processEnv(dataDir) })
    expect(admin.exitCode).toBe(1)
    expect(admin.stderr.toString()).toContain('DATA_DIR')
    // …while one that only reads says the folder does not exist (a usage error, exit 2).
    const reader = Bun.spawnSync(['bun', MAIN, 'owner', 'list'], { cwd: ROOT, env: processEnv(dataDir) })
    expect(reader.exitCode).toBe(2)
    expect(reader.stderr.toString()).toContain(`${dataDir} (DATA_DIR) does not exist`)
  }, 30_000)

  test('a tenants folder in the way is named too', async () => {
    const dataDir = tempDir('pfin-blocked-')
    mkdirSync(dataDir, { recursive: true })
    writeFileSync(join(dataDir, 'tenants'), 'in the way')
    const admin = Bun.spawnSync(['bun', MAIN, 'owner', 'create', '--name', 'Ana'], { cwd: ROOT, env: processEnv(dataDir) })
    expect(admin.exitCode).toBe(1)
    expect(admin.stderr.toString()).toContain(join(dataDir, 'tenants'))
  }, 30_000)
})

describe('oversized bodies', () => {
  test('every body over the limit gets the contract 413 (problem+json, request id, rate-limit headers), however large or however sent', async () => {
    const dataDir = tempDir('pfin-413-')
    const env = processEnv(dataDir)
    const { id } = await adminJson(env, 'owner', 'create', '--name', 'Ana')
    const { key } = await adminJson(env, 'key', 'create', '--owner', String(id))
    const server = await startServer(env)
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'big' }
    for (const size of [1024 * 1024 + 1, 5 * 1024 * 1024, 8 * 1024 * 1024]) {
      const body = `{"name":"${'x'.repeat(size)}"}`
      const res = await sendRaw(server.url, '/v1/accounts', { method: 'POST', headers, body })
      expectProblem(res, 413, 'payload_too_large')
    }
    // Chunked, with no Content-Length: cut off while reading.
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 40; i++) controller.enqueue(new TextEncoder().encode(' '.repeat(64 * 1024)))
        controller.close()
      },
    })
    const chunked = await sendRaw(server.url, '/v1/accounts', { method: 'POST', headers, body: chunks })
    expectProblem(chunked, 413, 'payload_too_large')
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
  }, 30_000)
})
