import { type Subprocess, spawn } from 'bun'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { LITESTREAM_CONFIG } from '../db/data-dir.ts'

/**
 * Litestream (v0.3.13, from the npm package @flydotio/litestream) replicating a node's files
 * (CONTRACT §31): control.db and each owner placed on the node, to `<replica>/control` and
 * `<replica>/owners/<ownerId>`. Litestream reads its list of databases only at start, so a change
 * of the node's owners restarts it (it resumes from the write-ahead log, which pfin then never
 * checkpoints: Litestream is the only checkpointer of these files). The platform binary is run
 * directly: the npm wrapper keeps it running when the wrapper is killed, and hides its exit code.
 */

export function litestreamBinary(): string {
  const override = process.env.LITESTREAM_BIN?.trim()
  if (override) return override
  const platform = `${process.platform}-${process.arch}`
  try {
    return join(dirname(Bun.resolveSync(`@flydotio/litestream-${platform}/package.json`, import.meta.dir)), 'litestream')
  } catch {
    throw new Error(`no Litestream binary for ${platform}: install @flydotio/litestream or set LITESTREAM_BIN`)
  }
}

/** Where one database of a node is replicated. */
export const replicaOf = (replica: string, ownerId: string | null): string => `${replica}/${ownerId ? `owners/${ownerId}` : 'control'}`

/**
 * Litestream's configuration for `paths` (database → replica URL). `interval` is both how often it
 * looks at each file's log (`monitor-interval`) and how often it ships what it found
 * (`sync-interval`): its CPU grows with files × looks, and a write is at risk for about one
 * interval (CONTRACT §31).
 */
export function litestreamConfig(databases: { path: string; url: string }[], interval = '1s'): string {
  const lines = ['dbs:']
  for (const { path, url } of databases) {
    lines.push(`  - path: ${JSON.stringify(path)}`, `    monitor-interval: ${interval}`, '    replicas:')
    if (url.startsWith('file://')) lines.push('      - type: file', `        path: ${JSON.stringify(new URL(url).pathname)}`)
    else lines.push(`      - url: ${JSON.stringify(url)}`)
    lines.push(`        sync-interval: ${interval}`)
  }
  return `${lines.join('\n')}\n`
}

export class LitestreamSupervisor {
  private process: Subprocess | undefined
  private owners = ''
  private timer: ReturnType<typeof setTimeout> | undefined
  private stopping = false
  private chain: Promise<void> = Promise.resolve()

  constructor(
    private readonly dataDir: string,
    private readonly replica: string,
    private readonly log: (message: string) => void,
    private readonly intervalSeconds = 1,
  ) {}

  /** The node's owners now: Litestream is restarted (soon, once for a burst of changes) when they differ. */
  update(owners: string[]): void {
    const present = owners.filter((owner) => existsSync(join(this.dataDir, 'tenants', `${owner}.db`))).sort()
    const key = present.join(',')
    if (key === this.owners && this.process) return
    this.owners = key
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.chain = this.chain.then(() => this.restart(present))
    }, 100)
  }

  private async restart(owners: string[]): Promise<void> {
    await this.kill()
    if (this.stopping) return
    const config = join(this.dataDir, LITESTREAM_CONFIG)
    const databases = [{ path: join(this.dataDir, 'control.db'), url: replicaOf(this.replica, null) }]
    for (const owner of owners) databases.push({ path: join(this.dataDir, 'tenants', `${owner}.db`), url: replicaOf(this.replica, owner) })
    for (const { url } of databases) if (url.startsWith('file://')) mkdirSync(new URL(url).pathname, { recursive: true })
    writeFileSync(config, litestreamConfig(databases, `${this.intervalSeconds}s`))
    const child = spawn([litestreamBinary(), 'replicate', '-config', config], { stdout: 'ignore', stderr: 'pipe' })
    this.process = child
    void new Response(child.stderr).text().then((text) => {
      if (child.exitCode !== 0 && child.signalCode === null && text) this.log(`litestream exited (${child.exitCode}): ${text.slice(-500)}`)
    })
  }

  private async kill(): Promise<void> {
    const child = this.process
    this.process = undefined
    if (!child || child.exitCode !== null) return
    child.kill('SIGTERM')
    const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(5000).then(() => false)])
    if (!exited) child.kill('SIGKILL')
    await child.exited
  }

  /** Stops Litestream (it ships what it has on SIGTERM) and waits for it. */
  async stop(): Promise<void> {
    this.stopping = true
    clearTimeout(this.timer)
    await this.chain
    await this.kill()
  }
}
