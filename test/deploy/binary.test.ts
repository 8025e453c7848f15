import { afterAll, expect, test } from 'bun:test'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * The single binary (CONTRACT §1): built with `bun build --compile`, copied
 * alone into an empty directory and run from another one, it must make an owner and a key,
 * migrate both databases (the SQL is embedded) and serve `/healthz`, `/v1/me`, /docs and an import
 * (whose file is read by a worker the binary embeds).
 */

const ROOT = join(import.meta.dir, '..', '..')
const scratch = mkdtempSync(join(tmpdir(), 'pfin-binary-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

async function run(cmd: string[], opts: { cwd: string; env?: Record<string, string> }) {
  const proc = Bun.spawn(cmd, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}

/** Reads a stream line by line until one matches; resolves with the match. */
async function waitForLine(stream: ReadableStream<Uint8Array>, pattern: RegExp, timeoutMs: number, seen: string[]): Promise<RegExpExecArray> {
  const reader = stream.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  const deadline = Date.now() + timeoutMs
  try {
    while (Date.now() < deadline) {
      const chunk = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => null)])
      if (chunk === null || chunk.done) break
      buffer += decoder.decode(chunk.value, { stream: true })
      let newline = buffer.indexOf('\n')
      while (newline >= 0) {
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + 1)
        seen.push(line)
        const match = pattern.exec(line)
        if (match) return match
        newline = buffer.indexOf('\n')
      }
    }
  } finally {
    reader.releaseLock()
  }
  throw new Error(`no line matching ${pattern} within ${timeoutMs} ms; saw:\n${seen.join('\n')}`)
}

test(
  'dist/pfin runs alone: admin commands, serve, /healthz, /v1/me, clean SIGTERM',
  async () => {
    const build = await run(['bun', 'run', 'build'], { cwd: ROOT })
    if (build.code !== 0) throw new Error(`bun run build failed (${build.code}):\n${build.stdout}\n${build.stderr}`)

    // The binary alone in a fresh directory: no node_modules, no src/, no drizzle/.
    const binDir = join(scratch, 'bin')
    mkdirSync(binDir)
    const pfin = join(binDir, 'pfin')
    copyFileSync(join(ROOT, 'dist', 'pfin'), pfin)
    expect(readdirSync(binDir)).toEqual(['pfin'])
    // …and run from yet another directory, with a relative DATA_DIR.
    const work = join(scratch, 'work')
    mkdirSync(work)
    const env = { DATA_DIR: 'data', PORT: '0', HOST: '127.0.0.1' }

    const owner = await run([pfin, 'owner', 'create', '--name', 'Binary Owner', '--country', 'NL', '--json'], { cwd: work, env })
    expect(owner.stderr).toBe('')
    expect(owner.code).toBe(0)
    const ownerId = JSON.parse(owner.stdout).id as string
    expect(ownerId).toMatch(/^own_/)

    // Without --json, the hint names the command the user is running: the binary, not `bun run admin`.
    const second = await run([pfin, 'owner', 'create', '--name', 'Hinted'], { cwd: work, env })
    expect(second.code).toBe(0)
    expect(second.stdout).toContain(`Next: ${pfin} key create --owner own_`)
    expect(second.stdout).not.toContain('bun run admin')

    const key = await run([pfin, 'key', 'create', '--owner', ownerId, '--json'], { cwd: work, env })
    expect(key.code).toBe(0)
    const apiKey = JSON.parse(key.stdout).key as string
    expect(existsSync(join(work, 'data', 'control.db'))).toBe(true)
    expect(existsSync(join(work, 'data', 'tenants', `${ownerId}.db`))).toBe(true)

    const server = Bun.spawn([pfin, 'serve'], { cwd: work, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
    const stderr = new Response(server.stderr).text()
    let exited = false
    void server.exited.then(() => {
      exited = true
    })
    try {
      const seen: string[] = []
      const match = await waitForLine(server.stdout, /pfin listening on http:\/\/([^\s:]+):(\d+)/, 20_000, seen)
      const base = `http://127.0.0.1:${match[2]}`

      const health = await fetch(`${base}/healthz`)
      expect(health.status).toBe(200)
      expect(await health.json()).toEqual({ status: 'ok' })

      const me = await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${apiKey}` } })
      expect(me.status).toBe(200)
      const body = (await me.json()) as { data: { id: string; country: string; tier: string } }
      expect(body.data).toMatchObject({ id: ownerId, country: 'NL', tier: 'pro' })

      const denied = await fetch(`${base}/v1/me`)
      expect(denied.status).toBe(401)
      expect(denied.headers.get('content-type')).toStartWith('application/problem+json')

      // /docs from the binary alone: the viewer's files are embedded, there is no node_modules here.
      const docs = await fetch(`${base}/docs`)
      expect(docs.status).toBe(200)
      expect(docs.headers.get('content-security-policy')).toStartWith("default-src 'none'")
      const assetPaths = [...(await docs.text()).matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1] as string)
      expect(assetPaths.length).toBe(3)
      for (const path of assetPaths) {
        const asset = await fetch(`${base}${path}`)
        expect({ path, status: asset.status, cache: asset.headers.get('cache-control') }).toEqual({
          path,
          status: 200,
          cache: 'public, max-age=31536000, immutable',
        })
        expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(100)
      }
      const viewerPath = assetPaths.find((path) => /\/swagger-ui-[\d.]+\.js$/.test(path))
      const viewer = await fetch(`${base}${viewerPath}`, { headers: { 'accept-encoding': 'identity' } })
      const packaged = await Bun.file(join(ROOT, 'node_modules', 'swagger-ui-dist', 'swagger-ui-bundle.js')).bytes()
      expect(Buffer.from(await viewer.arrayBuffer()).equals(Buffer.from(packaged))).toBe(true)
      expect(await (await fetch(`${base}/`)).json()).toEqual({ name: 'pfin', docs: '/docs', openapi: '/openapi.json', health: '/healthz' })

      // An import reads its file in a worker thread: the binary carries the worker as a second entrypoint (CONTRACT §24).
      const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }
      const account = await fetch(`${base}/v1/accounts`, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': 'binary-account' },
        body: JSON.stringify({ name: 'Checking', type: 'bank', balance: 0, currency: 'EUR' }),
      })
      const accountId = ((await account.json()) as { data: { id: string } }).data.id
      const imported = await fetch(`${base}/v1/accounts/${accountId}/imports`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': 'binary-import', 'content-type': 'text/csv' },
        body: 'Datum;Omschrijving;Bedrag\n14-11-2026;Albert Heijn;-12,50\n',
      })
      expect(imported.status).toBe(200)
      expect(((await imported.json()) as { data: { summary: { created: number } } }).data.summary.created).toBe(1)

      server.kill('SIGTERM')
      const code = await Promise.race([server.exited, Bun.sleep(10_000).then(() => 'timeout' as const)])
      expect(code).toBe(0)
      expect(await stderr).toBe('')
    } finally {
      if (!exited) server.kill('SIGKILL')
    }
  },
  { timeout: 180_000 },
)
