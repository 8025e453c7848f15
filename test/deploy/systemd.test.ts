import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { connect } from 'node:net'
import { startTestServer, type TestServer, tempDir } from '../support/harness.ts'

/**
 * deploy/pfin.service and deploy/Caddyfile: the directives the README promises are there, and
 * where the tools are installed, `systemd-analyze verify` and `caddy validate` accept the files
 * (and Caddy really proxies to pfin). Neither tool is required: without one, its checks are
 * skipped with a message.
 */

setDefaultTimeout(30_000)

const root = join(import.meta.dir, '..', '..')
const unitPath = join(root, 'deploy', 'pfin.service')
const caddyfilePath = join(root, 'deploy', 'Caddyfile')
const unit = readFileSync(unitPath, 'utf8')
const systemdAnalyze = Bun.which('systemd-analyze')
const caddy = Bun.which('caddy')

if (!systemdAnalyze) console.warn('SKIPPED systemd-analyze verify of deploy/pfin.service: systemd-analyze not found (apt-get install -y systemd)')
if (!caddy) console.warn('SKIPPED caddy validate of deploy/Caddyfile: caddy not found (apt-get install -y caddy)')

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** The [Service] settings as name → values (a name may repeat). */
function serviceSettings(text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>()
  let section = ''
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
    const header = /^\[(.+)\]$/.exec(line)
    if (header) {
      section = header[1] as string
      continue
    }
    if (section !== 'Service') continue
    const at = line.indexOf('=')
    const name = line.slice(0, at)
    settings.set(name, [...(settings.get(name) ?? []), line.slice(at + 1)])
  }
  return settings
}

async function run(argv: string[], cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(argv, { cwd, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}

/** A copy of the unit whose ExecStart names an executable that exists (verify checks it). */
function unitCopy(edit: (text: string) => string = (text) => text): string {
  const dir = tempDir('pfin-unit-')
  dirs.push(dir)
  const binary = join(dir, 'pfin')
  writeFileSync(binary, '#!/bin/sh\nexit 0\n')
  chmodSync(binary, 0o755)
  const text = edit(unit.replace(/^ExecStart=\/usr\/local\/bin\/pfin /m, `ExecStart=${binary} `))
  expect(text).toContain(`ExecStart=${binary} serve`)
  const path = join(dir, 'pfin.service')
  writeFileSync(path, text)
  return path
}

describe('deploy/pfin.service', () => {
  const settings = serviceSettings(unit)
  const one = (name: string) => settings.get(name)?.at(-1)

  test('runs the binary as a non-root user over its state directory, on loopback', () => {
    expect(one('ExecStart')).toBe('/usr/local/bin/pfin serve')
    expect(one('User') ?? (one('DynamicUser') === 'yes' ? 'dynamic' : undefined)).toBeDefined()
    expect(one('User')).not.toBe('root')
    expect(one('StateDirectory')).toBe('pfin')
    expect(settings.get('Environment')).toContain('DATA_DIR=/var/lib/pfin')
    expect(settings.get('Environment')).toContain('HOST=127.0.0.1')
    // The proxy beside it names the client (CONTRACT §25): loopback in both families.
    expect(settings.get('Environment')).toContain('TRUSTED_PROXIES=127.0.0.1,::1')
    expect(one('Restart')).toBe('on-failure')
    expect(one('TimeoutStopSec')).toBe('20')
    expect(one('UMask')).toBe('0077')
    expect(one('LimitNOFILE')).toBe('65536')
  })

  test('is hardened, but leaves Bun’s JIT its writable+executable memory', () => {
    for (const [name, value] of [
      ['ProtectSystem', 'strict'],
      ['ProtectHome', 'yes'],
      ['PrivateTmp', 'yes'],
      ['NoNewPrivileges', 'yes'],
      ['PrivateDevices', 'yes'],
      ['ProtectKernelTunables', 'yes'],
      ['ProtectKernelModules', 'yes'],
      ['ProtectControlGroups', 'yes'],
      ['RestrictAddressFamilies', 'AF_INET AF_INET6 AF_UNIX'],
      ['RestrictNamespaces', 'yes'],
      ['LockPersonality', 'yes'],
      ['SystemCallArchitectures', 'native'],
    ]) {
      expect(`${name}=${one(name as string)}`).toBe(`${name}=${value}`)
    }
    expect(one('MemoryDenyWriteExecute') ?? 'no').toBe('no')
    // The scheduled-backup example is there, commented out.
    expect(unit).toMatch(/^#Environment=BACKUP_DIR=/m)
    expect(unit).toMatch(/^#ReadWritePaths=/m)
  })

  test.skipIf(!systemdAnalyze)('systemd-analyze verify accepts it (and rejects a broken copy)', async () => {
    const good = await run([systemdAnalyze as string, 'verify', unitCopy()])
    expect({ code: good.code, stderr: good.stderr.trim() }).toEqual({ code: 0, stderr: '' })
    // The check is real: an unknown setting and a bad value are reported.
    const bad = await run([
      systemdAnalyze as string,
      'verify',
      unitCopy((text) => text.replace('ProtectHome=yes', 'ProtectHome=sometimes\nProtectEverything=yes')),
    ])
    expect(bad.stderr).toContain('ProtectEverything')
    expect(bad.stderr).toContain('sometimes')
  })

  test.skipIf(!systemdAnalyze)('systemd-analyze verify accepts it with the scheduled-backup lines uncommented', async () => {
    const backups = tempDir('pfin-unit-backups-')
    dirs.push(backups)
    const path = unitCopy((text) =>
      text
        .replace('#Environment=BACKUP_DIR=/var/backups/pfin', `Environment=BACKUP_DIR=${backups}`)
        .replace('#ReadWritePaths=/var/backups/pfin', `ReadWritePaths=${backups}`),
    )
    expect(readFileSync(path, 'utf8')).toMatch(/^ReadWritePaths=/m)
    const result = await run([systemdAnalyze as string, 'verify', path])
    expect({ code: result.code, stderr: result.stderr.trim() }).toEqual({ code: 0, stderr: '' })
  })
})

describe('deploy/Caddyfile', () => {
  const caddyfile = readFileSync(caddyfilePath, 'utf8')

  test('proxies the example name to pfin on loopback and explains TRUSTED_PROXIES and the shared bucket without it', () => {
    expect(caddyfile).toMatch(/^pfin\.example\.com \{/m)
    expect(caddyfile).toMatch(/^\treverse_proxy 127\.0\.0\.1:3000$/m)
    expect(caddyfile).toContain('X-Forwarded-For')
    expect(caddyfile).toContain('TRUSTED_PROXIES=127.0.0.1,::1')
    expect(caddyfile).toContain('share ONE bucket')
  })

  test.skipIf(!caddy)('caddy validate accepts it', async () => {
    const result = await run([caddy as string, 'validate', '--config', caddyfilePath, '--adapter', 'caddyfile'])
    expect(result.code).toBe(0)
  })

  /** The Caddyfile as shipped, on plain HTTP at a free local port, proxying to `server`, logging nowhere; `stop` ends Caddy. */
  async function caddyInFront(server: TestServer): Promise<{ port: number; stop(): Promise<void> }> {
    const dir = tempDir('pfin-caddy-')
    dirs.push(dir)
    const probe = Bun.serve({ port: 0, fetch: () => new Response() })
    const port = probe.port as number
    probe.stop(true)
    const upstream = new URL(server.url).host
    const local = caddyfile
      .replace(/^pfin\.example\.com \{/m, `{\n\tadmin off\n\tauto_https off\n}\n\nhttp://127.0.0.1:${port} {`)
      .replace('reverse_proxy 127.0.0.1:3000', `reverse_proxy ${upstream}`)
      .replace(/output file \S+/, 'output discard')
    writeFileSync(join(dir, 'Caddyfile'), local)
    const proc = Bun.spawn([caddy as string, 'run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], {
      cwd: dir,
      stdout: 'ignore',
      stderr: 'pipe',
    })
    let health: Response | undefined
    for (let i = 0; i < 100 && !health; i++) {
      health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined)
      if (!health) await Bun.sleep(100)
    }
    expect(health?.status).toBe(200)
    return {
      port,
      async stop() {
        proc.kill('SIGTERM')
        await proc.exited
      },
    }
  }

  test.skipIf(!caddy)('served by Caddy on a local port, it reaches pfin: keys pass through, headers are added', async () => {
    const server = await startTestServer()
    const front = await caddyInFront(server)
    try {
      const owner = await server.owner()
      const health = await fetch(`http://127.0.0.1:${front.port}/healthz`)
      expect(health.status).toBe(200)
      expect(health.headers.get('x-content-type-options')).toBe('nosniff')
      expect(health.headers.get('strict-transport-security')).toContain('max-age=')
      const me = await fetch(`http://127.0.0.1:${front.port}/v1/me`, { headers: { Authorization: `Bearer ${owner.key}` } })
      expect(me.status).toBe(200)
      expect(((await me.json()) as { data: { id: string } }).data.id).toBe(owner.id)
    } finally {
      await front.stop()
      await server.stop({ remove: true })
    }
  })

  test.skipIf(!caddy)(
    'with the unit’s TRUSTED_PROXIES, each client behind Caddy has its own anonymous bucket, and a forged X-Forwarded-For changes nothing',
    async () => {
      // The value the unit sets, read from the unit (CONTRACT §25).
      const trusted = (serviceSettings(unit).get('Environment') ?? []).find((line) => line.startsWith('TRUSTED_PROXIES='))?.slice('TRUSTED_PROXIES='.length)
      expect(trusted).toBe('127.0.0.1,::1')
      const server = await startTestServer({ env: { TRUSTED_PROXIES: trusted as string, ANON_RATE_LIMIT_PER_MINUTE: '50' } })
      const front = await caddyInFront(server)
      /** `GET /v1/me` without a key, sent to Caddy from `localAddress` (another loopback address stands for another client). */
      const remaining = (localAddress: string, forged?: string) =>
        new Promise<number>((resolve, reject) => {
          let text = ''
          const socket = connect({ host: '127.0.0.1', port: front.port, localAddress }, () =>
            socket.write(`GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\n${forged ? `X-Forwarded-For: ${forged}\r\n` : ''}Connection: close\r\n\r\n`),
          )
          socket.setEncoding('utf8')
          socket.on('data', (chunk) => {
            text += chunk
          })
          socket.on('error', reject)
          socket.on('close', () => resolve(Number(/x-ratelimit-remaining-minute: (\d+)/i.exec(text)?.[1])))
        })
      try {
        expect(await remaining('127.0.0.66')).toBe(49)
        expect(await remaining('127.0.0.66', '203.0.113.1')).toBe(48)
        expect(await remaining('127.0.0.66', '203.0.113.2')).toBe(47)
        expect(await remaining('127.0.0.77')).toBe(49)
      } finally {
        await front.stop()
        await server.stop({ remove: true })
      }
    },
  )
})
