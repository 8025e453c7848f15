import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A headless Chromium driven over the DevTools protocol with nothing but Bun's WebSocket: no
 * Playwright, no download. The browser is the system's (`apt-get install chromium`), or the one
 * named by PFIN_CHROMIUM.
 */

export function findChromium(): string | null {
  const named = process.env.PFIN_CHROMIUM
  if (named) return named
  for (const name of ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome']) {
    const found = Bun.which(name)
    if (found) return found
  }
  return null
}

type Json = Record<string, unknown>
type Listener = (params: Json) => void

export class Browser {
  private nextId = 1
  private readonly pending = new Map<number, { resolve: (value: Json) => void; reject: (error: Error) => void; method: string }>()
  private readonly listeners = new Map<string, Listener[]>()
  private closed = false

  private constructor(
    private readonly proc: ReturnType<typeof Bun.spawn>,
    private readonly profile: string,
    private readonly socket: WebSocket,
    readonly stderr: string[],
  ) {
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; method?: string; params?: Json; result?: Json; error?: { message: string } }
      if (message.id !== undefined) {
        const call = this.pending.get(message.id)
        this.pending.delete(message.id)
        if (message.error) call?.reject(new Error(`${call.method}: ${message.error.message}`))
        else call?.resolve(message.result ?? {})
      } else if (message.method) {
        for (const listener of this.listeners.get(message.method) ?? []) listener(message.params ?? {})
      }
    })
    socket.addEventListener('close', () => {
      for (const call of this.pending.values()) call.reject(new Error(`${call.method}: the DevTools connection closed`))
      this.pending.clear()
    })
  }

  /**
   * Starts Chromium headless on a fresh profile, with every host name but 127.0.0.1 unresolvable
   * (no outside network, whatever the machine has), and connects to its one page.
   */
  static async launch(executable: string, opts: { width?: number; height?: number; timeoutMs?: number } = {}): Promise<Browser> {
    const { width = 1280, height = 1600, timeoutMs = 60_000 } = opts
    const profile = mkdtempSync(join(tmpdir(), 'pfin-chromium-'))
    const proc = Bun.spawn(
      [
        executable,
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--no-default-browser-check',
        '--disable-extensions',
        '--disable-dev-shm-usage',
        '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
        `--user-data-dir=${profile}`,
        `--window-size=${width},${height}`,
        '--remote-debugging-port=0',
        'about:blank',
      ],
      { stdout: 'ignore', stderr: 'pipe' },
    )
    const stderr: string[] = []
    try {
      const browserUrl = await waitForDevTools(proc, profile, stderr, timeoutMs)
      const port = new URL(browserUrl).port
      const deadline = Date.now() + timeoutMs
      let pageUrl: string | undefined
      while (!pageUrl) {
        const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { type: string; webSocketDebuggerUrl: string }[]
        pageUrl = targets.find((t) => t.type === 'page')?.webSocketDebuggerUrl
        if (!pageUrl) {
          if (Date.now() > deadline) throw new Error('Chromium opened no page')
          await Bun.sleep(100)
        }
      }
      const socket = new WebSocket(pageUrl)
      await new Promise<void>((resolve, reject) => {
        socket.addEventListener('open', () => resolve(), { once: true })
        socket.addEventListener('error', () => reject(new Error(`cannot connect to ${pageUrl}`)), { once: true })
      })
      return new Browser(proc, profile, socket, stderr)
    } catch (error) {
      proc.kill('SIGKILL')
      await proc.exited
      rmSync(profile, { recursive: true, force: true })
      throw new Error(`${String(error)}\nChromium said:\n${stderr.join('').slice(-4000)}`)
    }
  }

  send(method: string, params: Json = {}): Promise<Json> {
    if (this.closed) return Promise.reject(new Error(`${method}: the browser is closed`))
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method })
      this.socket.send(JSON.stringify({ id, method, params }))
    })
  }

  on(event: string, listener: Listener): void {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener])
  }

  /** Evaluates an expression in the page and returns its value (JSON-serialisable). */
  async evaluate<T>(expression: string): Promise<T> {
    const result = (await this.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true })) as {
      result: { value?: T }
      exceptionDetails?: { text: string; exception?: { description?: string } }
    }
    if (result.exceptionDetails) throw new Error(`in the page: ${result.exceptionDetails.exception?.description ?? result.exceptionDetails.text}`)
    return result.result.value as T
  }

  /** Polls `expression` until it is truthy; returns its last value. */
  async waitFor<T>(expression: string, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const value = await this.evaluate<T>(expression)
      if (value) return value
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${expression}`)
      await Bun.sleep(200)
    }
  }

  async screenshot(path: string): Promise<void> {
    const { data } = (await this.send('Page.captureScreenshot', { format: 'png' })) as { data: string }
    await Bun.write(path, Buffer.from(data, 'base64'))
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.socket.close()
    this.proc.kill('SIGTERM')
    const exited = await Promise.race([this.proc.exited.then(() => true), Bun.sleep(5_000).then(() => false)])
    if (!exited) {
      this.proc.kill('SIGKILL')
      await this.proc.exited
    }
    rmSync(this.profile, { recursive: true, force: true })
  }
}

/** Chromium writes its DevTools address to stderr and to DevToolsActivePort in the profile. */
async function waitForDevTools(proc: ReturnType<typeof Bun.spawn>, profile: string, stderr: string[], timeoutMs: number): Promise<string> {
  let exited = false
  void proc.exited.then(() => {
    exited = true
  })
  void (async () => {
    const decoder = new TextDecoder()
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) stderr.push(decoder.decode(chunk, { stream: true }))
  })()
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (exited) throw new Error(`Chromium exited with code ${proc.exitCode} before it listened`)
    try {
      const [port, path] = readFileSync(join(profile, 'DevToolsActivePort'), 'utf8').trim().split('\n')
      if (port && path) return `ws://127.0.0.1:${port}${path}`
    } catch {
      // not written yet
    }
    await Bun.sleep(100)
  }
  throw new Error(`Chromium did not open its DevTools port within ${timeoutMs} ms`)
}
