import { afterAll, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cleanup, MAIN, processEnv, ROOT, tempDir } from '../support/processes.ts'

/**
 * A server that cannot start says why, in words a self-hoster can act on (CONTRACT §14):
 * - DATA_DIR naming an existing file is refused naming the path, not with a bare EEXIST (every
 *   other case gets words: "a part of the path is a file, not a folder");
 * - a HOST that is not a usable address (HOST=999.1.1.1, HOST=example.invalid) is refused naming
 *   HOST and the address, not with "EINVAL: invalid argument, listen";
 * - HOST=::1 announces a URL that parses (`http://[::1]:PORT`, with brackets): scripts wait for
 *   the listening line and use its URL.
 */

afterAll(cleanup)

async function serve(extra: Record<string, string>, waitMs = 8_000) {
  const proc = Bun.spawn(['bun', MAIN, 'serve'], {
    cwd: ROOT,
    env: processEnv(tempDir('pfin-start-'), { LOG_FORMAT: 'off', ...extra }),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const timer = setTimeout(() => proc.kill('SIGTERM'), waitMs)
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  clearTimeout(timer)
  return { stdout, stderr, code }
}

test('DATA_DIR naming a file is refused in words, not with a bare EEXIST', async () => {
  const file = join(tempDir('pfin-file-'), 'not-a-folder')
  writeFileSync(file, 'x')
  const result = await serve({ DATA_DIR: file })
  expect(result.code).toBe(1)
  expect(result.stderr).toContain(file)
  expect(result.stderr).not.toContain('EEXIST')
}, 20_000)

test('an unusable HOST is refused with a message that names HOST and the address', async () => {
  const result = await serve({ HOST: '999.1.1.1' })
  expect(result.code).toBe(1)
  expect(result.stderr).toContain('HOST')
  expect(result.stderr).toContain('999.1.1.1')
}, 20_000)

test('HOST=::1 announces a URL that parses and points at the server', async () => {
  const proc = Bun.spawn(['bun', MAIN, 'serve'], {
    cwd: ROOT,
    env: processEnv(tempDir('pfin-v6-'), { LOG_FORMAT: 'off', HOST: '::1' }),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  try {
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
    let text = ''
    const deadline = Date.now() + 15_000
    while (!/pfin listening on \S+/.test(text) && Date.now() < deadline) {
      const { value, done } = await reader.read()
      if (done) break
      text += new TextDecoder().decode(value)
    }
    const announced = /pfin listening on (\S+)/.exec(text)?.[1] ?? ''
    // The failure this catches: "http://::1:41234", which URL.canParse refuses.
    expect(URL.canParse(announced)).toBe(true)
    expect((await fetch(new URL('/healthz', announced))).status).toBe(200)
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
  }
}, 30_000)
