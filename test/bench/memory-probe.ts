/**
 * Where a server's resident memory goes (docs/performance.md "Memory"). Not a benchmark the
 * runner picks up: run it by hand, it takes about two minutes.
 *
 *   bun test/bench/memory-probe.ts                 # pfin and the stack's floor, from source and compiled
 *   PROBE_ROUNDS=1 PROBE_DURATION=5 bun test/bench/memory-probe.ts pfin-src floor-src
 *   bun test/bench/memory-probe.ts pfin-bin pfin-bin-smol   # also pfin-src-smol: Bun's --smol
 *
 * Each target gets the rss benchmark's load (`GET /v1/me`, the 50-row list, upserts with fresh
 * keys; the floor `GET /healthz`), PROBE_ROUNDS rounds of PROBE_DURATION seconds per phase, then:
 * RSS as loaded, after `Bun.gc(true)`, after PROBE_IDLE seconds idle (default 10) and another
 * collection, after glibc's `malloc_trim(0)` and after `PRAGMA shrink_memory` on every SQLite
 * connection (what each one's page cache held is printed on stderr). Each phase prints its
 * requests/s, the server's CPU per request and, in-process, the bytes malloc'd per request. From /proc/<pid>/smaps it sorts the resident pages: the
 * executable's file pages, other files (.so, .node), anonymous memory (split into JavaScriptCore's
 * and mimalloc's where the process can tell, see below), the JIT's executable pages, glibc's heap
 * and the stacks. The `-src` targets run in this file's own process (PROBE_CHILD), so they can
 * report JavaScriptCore's heap (`bun:jsc` heapStats) and mimalloc's counters, and for pfin the
 * SQLite pragmas of every open connection, and a heap snapshot summed by class; the `-bin` targets are `bun run build`'s binary and
 * the compiled floor, read from /proc only.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describeKeyed, keyedLoad } from './keyed-load.ts'
import { buildFloor, Cleanup, load, makeOwnerAndKey, ROOT, spawnServer, tempDir, UNLIMITED, type Service } from './support.ts'
import { seed } from './tenant.bench.ts'

const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 3)
const DURATION = Number(process.env.PROBE_DURATION ?? 5)
const IDLE_S = Number(process.env.PROBE_IDLE ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16)

const MiB = 1024 * 1024
const mib = (bytes: number) => (bytes / MiB).toFixed(1)

/** VmRSS, RssAnon, RssFile of a process, in bytes. */
function status(pid: number | 'self'): { rss: number; anon: number; file: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN) * 1024
  return { rss: kib('VmRSS'), anon: kib('RssAnon'), file: kib('RssFile') }
}

// ---------------------------------------------------------------------------------------------
// The child: a server in this process, with a second port that reports its memory.

interface Report {
  rss: number
  anon: number
  file: number
  heapUsed: number
  heapTotal: number
  external: number
  arrayBuffers: number
  /** JavaScriptCore: live heap, its capacity, the "extra" (malloc'd memory objects report), object count. */
  jsc: { heapSize: number; heapCapacity: number; extra: number; objects: number; top: [string, number][] }
  /** mimalloc's counters: live small/large allocations and committed bytes. */
  mimalloc: { normal: number; huge: number; committed: number; purged: number; requested: number } | null
  sqlite?: unknown
}

function report(extra: () => unknown): Report {
  const jsc = require('bun:jsc') as typeof import('bun:jsc')
  const stats = jsc.heapStats() as ReturnType<typeof jsc.heapStats> & { mimalloc?: Record<string, { current?: number } | number> }
  const mu = process.memoryUsage()
  const mi = stats.mimalloc
  const cur = (name: string) => Number((mi?.[name] as { current?: number } | undefined)?.current ?? 0)
  const top = Object.entries(stats.objectTypeCounts)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12)
  return {
    ...status('self'),
    heapUsed: mu.heapUsed,
    heapTotal: mu.heapTotal,
    external: mu.external,
    arrayBuffers: mu.arrayBuffers,
    jsc: { heapSize: stats.heapSize, heapCapacity: stats.heapCapacity, extra: stats.extraMemorySize, objects: stats.objectCount, top },
    mimalloc: mi
      ? {
          normal: cur('malloc_normal'),
          huge: cur('malloc_huge'),
          committed: cur('committed'),
          purged: Number(mi.purged ?? 0),
          requested: Number(mi.malloc_requested ?? 0),
        }
      : null,
    sqlite: extra(),
  }
}

/** The JavaScriptCore heap snapshot's live cells, summed by class: where the JS heap's bytes are. */
function snapshotBySize(): [string, number, number][] {
  Bun.gc(true)
  const snapshot = Bun.generateHeapSnapshot() as unknown as { nodes: number[]; nodeClassNames: string[]; nodeFields?: string[] }
  const fields = snapshot.nodeFields ?? ['id', 'size', 'nodeClassNameIndex', 'flags']
  const width = fields.length
  const sizeAt = fields.indexOf('size')
  const classAt = fields.indexOf('nodeClassNameIndex')
  const sums = new Map<string, [number, number]>()
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const name = snapshot.nodeClassNames[snapshot.nodes[i + classAt] as number] as string
    const row = sums.get(name) ?? [0, 0]
    row[0] += snapshot.nodes[i + sizeAt] as number
    row[1]++
    sums.set(name, row)
  }
  return [...sums]
    .map(([name, [bytes, count]]) => [name, bytes, count] as [string, number, number])
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
}

/** glibc's malloc_trim(0): what glibc's own heap (native addons such as argon2 use it) keeps and could return. */
function mallocTrim(): number {
  const { dlopen, FFIType } = require('bun:ffi') as typeof import('bun:ffi')
  const libc = dlopen('libc.so.6', { malloc_trim: { args: [FFIType.u64], returns: FFIType.i32 } })
  try {
    return libc.symbols.malloc_trim(0)
  } finally {
    libc.close()
  }
}

async function child(kind: string): Promise<void> {
  let extra: () => unknown = () => undefined
  let shrink = () => {}
  if (kind === 'floor') {
    await import('./cold-floor.ts')
  } else {
    const { loadConfig } = await import('../../src/config.ts')
    const { createApp, createPlatform, listen, startMaintenance } = await import('../../src/server.ts')
    const config = loadConfig(process.env)
    const platform = createPlatform(config)
    const server = listen(createApp(platform), config)
    startMaintenance(platform)
    const pragma = (db: import('bun:sqlite').Database, name: string) => Object.values(db.query(`PRAGMA ${name}`).get() as object)[0]
    const describeDb = (db: import('bun:sqlite').Database) =>
      Object.fromEntries(['cache_size', 'mmap_size', 'temp_store', 'page_size', 'journal_mode', 'synchronous'].map((p) => [p, String(pragma(db, p))]))
    shrink = () => {
      const live = () => {
        const mi = (require('bun:jsc') as typeof import('bun:jsc')).heapStats() as unknown as { mimalloc: Record<string, { current: number }> }
        return (mi.mimalloc.malloc_normal?.current ?? 0) + (mi.mimalloc.malloc_huge?.current ?? 0)
      }
      const freed: Record<string, string> = {}
      const databases: [string, import('bun:sqlite').Database][] = [
        ['control.db', platform.control.sqlite],
        ...platform.tenants.openTenants().map((t): [string, import('bun:sqlite').Database] => [t.ownerId, t.sqlite]),
      ]
      for (const [name, db] of databases) {
        const before = live()
        db.run('PRAGMA shrink_memory')
        freed[name] = `${mib(before - live())} MiB`
      }
      console.error(`PRAGMA shrink_memory freed (mimalloc live, includes the stats call's noise): ${JSON.stringify(freed)}`)
    }
    extra = () => ({
      control: describeDb(platform.control.sqlite),
      tenants: platform.tenants.openTenants().map((t) => ({ owner: t.ownerId, ...describeDb(t.sqlite) })),
    })
    console.log(`pfin listening on http://127.0.0.1:${server.port}`)
  }
  const reports = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const step = new URL(request.url).pathname
      if (step === '/gc') Bun.gc(true)
      if (step === '/shrink') shrink()
      if (step === '/snapshot') return Response.json(snapshotBySize())
      if (step === '/trim') return Response.json({ trimmed: mallocTrim(), ...report(extra) })
      return Response.json(report(extra))
    },
  })
  console.log(`probe reports on port ${reports.port}`)
}

// ---------------------------------------------------------------------------------------------
// The parent: loads each target and sorts its resident pages.

interface Category {
  name: string
  rss: number
}

/** Resident pages of a process by what they are, from /proc/<pid>/smaps. */
function smaps(pid: number, exe: string): { categories: Category[]; biggestAnon: { range: string; size: number; rss: number; perms: string }[] } {
  const text = readFileSync(`/proc/${pid}/smaps`, 'utf8')
  const sums = new Map<string, number>()
  const anon: { range: string; size: number; rss: number; perms: string }[] = []
  let header: { range: string; perms: string; path: string } | null = null
  let size = 0
  const add = (rss: number) => {
    if (!header) return
    const { perms, path } = header
    let name: string
    if ((exe && path === exe) || path.endsWith('/bun.exe')) name = 'executable (file pages)'
    else if (path === '[heap]') name = 'glibc heap [heap]'
    else if (path.startsWith('[stack')) name = 'stacks'
    else if (path.startsWith('/')) name = path.endsWith('.node') ? 'native addons (.node)' : path.includes('.so') ? 'shared libraries (.so)' : `other files`
    else if (path.startsWith('[')) name = `kernel ${path}`
    else if (perms.includes('x')) name = 'anonymous executable (JIT)'
    else {
      name = 'anonymous'
      anon.push({ range: header.range, size, rss, perms })
    }
    sums.set(name, (sums.get(name) ?? 0) + rss)
  }
  for (const line of text.split('\n')) {
    const mapping = /^([0-9a-f]+-[0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (mapping) {
      header = { range: mapping[1] as string, perms: mapping[2] as string, path: (mapping[3] ?? '').trim() }
      continue
    }
    const field = /^(Size|Rss):\s+(\d+) kB/.exec(line)
    if (field?.[1] === 'Size') size = Number(field[2]) * 1024
    if (field?.[1] === 'Rss') add(Number(field[2]) * 1024)
  }
  return {
    categories: [...sums].map(([name, rss]) => ({ name, rss })).sort((a, b) => b.rss - a.rss),
    biggestAnon: anon.sort((a, b) => b.rss - a.rss).slice(0, 8),
  }
}

interface Target {
  name: string
  cmd: string[]
  env: Record<string, string>
  exe: string
  inProcess: boolean
  floor: boolean
}

async function probe(target: Target, dataDir: string, key: string, accountId: string): Promise<Record<string, number>> {
  const service: Service = await spawnServer(target.cmd, { ...target.env, DATA_DIR: dataDir }, target.name)
  const pid = service.proc.pid
  const out: Record<string, number> = {}
  try {
    let reportPort: string | undefined
    if (target.inProcess) {
      // The child prints its report port right after its listening line; give it a moment.
      for (let i = 0; i < 50 && !reportPort; i++) {
        await Bun.sleep(20)
        reportPort = await findReportPort(service)
      }
    }
    const ask = async (step: string): Promise<Report | null> =>
      reportPort ? ((await (await fetch(`http://127.0.0.1:${reportPort}/${step}`)).json()) as Report) : null
    const headers = { authorization: `Bearer ${key}` }
    /** Bytes malloc'd per request (mimalloc's cumulative count: JS cells' blocks and everything native), in-process targets only. */
    const perRequest = async <R extends { requests: number; non2xx: number; errors: number; rps: number }>(
      phase: string,
      run: () => Promise<R>,
    ): Promise<R> => {
      const before = (await ask('report'))?.mimalloc?.requested
      const cpuBefore = cpuTicks(pid)
      const r = await run()
      check(r)
      const cpu = ((cpuTicks(pid) - cpuBefore) * 1e4) / r.requests
      const after = (await ask('report'))?.mimalloc?.requested
      const malloced = before !== undefined && after !== undefined ? `, ${((after - before) / r.requests / 1024).toFixed(1)} KiB malloc'd per request` : ''
      console.log(`  ${target.name} ${phase}: ${r.requests} requests, ${r.rps.toFixed(0)}/s, ${cpu.toFixed(0)} µs CPU per request${malloced}`)
      return r
    }
    out.idle = status(pid).rss
    const atStart = await ask('gc')
    out.startGc = status(pid).rss
    if (!target.floor) {
      const first = await fetch(`${service.url}/v1/me`, { headers })
      if (first.status !== 200) throw new Error(`GET /v1/me answered ${first.status}`)
      await first.text()
      out.firstRequest = status(pid).rss
    }
    for (let round = 0; round < ROUNDS; round++) {
      if (target.floor) {
        for (let i = 0; i < 3; i++) await perRequest('healthz', () => load({ url: `${service.url}/healthz`, duration: DURATION, connections: CONNECTIONS }))
      } else {
        await perRequest('me', () => load({ url: `${service.url}/v1/me`, headers, duration: DURATION, connections: CONNECTIONS }))
        out[`r${round + 1}.me`] = status(pid).rss
        await perRequest('list', () => load({ url: `${service.url}/v1/transactions?limit=50`, headers, duration: DURATION, connections: CONNECTIONS }))
        out[`r${round + 1}.list`] = status(pid).rss
        const r = await perRequest('upsert', () =>
          keyedLoad({
            url: `${service.url}/v1/transactions/upsert`,
            headers,
            body: `{"externalId":"new-{key}","accountId":"${accountId}","amount":{amount},"date":"2026-01-15","note":"bench rss"}`,
            keyPrefix: `${target.name}-${Date.now()}-${round}-`,
            connections: CONNECTIONS,
            duration: DURATION,
          }),
        )
        if (r.non2xx || r.errors || r.replayed) throw new Error(describeKeyed(target.name, r))
      }
      out[`r${round + 1}.loaded`] = status(pid).rss
    }
    const loaded = await ask('report')
    const loadedMaps = smaps(pid, target.exe)
    out.loaded = status(pid).rss
    const gc = await ask('gc')
    out.afterGc = status(pid).rss
    await Bun.sleep(IDLE_S * 1000)
    const idle = await ask('gc')
    out.idleGc = status(pid).rss
    const trimmed = await ask('trim')
    out.afterTrim = status(pid).rss
    const shrunk = await ask('shrink')
    out.afterShrink = status(pid).rss
    const endMaps = smaps(pid, target.exe)
    const snapshot = reportPort ? ((await (await fetch(`http://127.0.0.1:${reportPort}/snapshot`)).json()) as [string, number, number][]) : null

    console.log(`\n=== ${target.name} (${target.cmd.join(' ')}) ===`)
    console.log(
      `RSS MiB: ${Object.entries(out)
        .map(([k, v]) => `${k} ${mib(v)}`)
        .join(', ')}`,
    )
    for (const [label, maps] of [
      ['loaded', loadedMaps],
      ['idle+gc+trim', endMaps],
    ] as const) {
      console.log(`smaps ${label}: ${maps.categories.map((c) => `${c.name} ${mib(c.rss)}`).join('; ')}`)
    }
    console.log(
      `  biggest anonymous mappings (loaded): ${loadedMaps.biggestAnon.map((m) => `${m.range} ${m.perms} size ${mib(m.size)} rss ${mib(m.rss)}`).join('\n    ')}`,
    )
    for (const [label, r] of [
      ['start+gc', atStart],
      ['loaded', loaded],
      ['gc', gc],
      ['idle+gc', idle],
      ['trim', trimmed],
      ['shrink', shrunk],
    ] as const) {
      if (!r) continue
      const mi = r.mimalloc
      console.log(
        `${label.padEnd(8)} rss ${mib(r.rss)} (anon ${mib(r.anon)}, file ${mib(r.file)}); JSC heap ${mib(r.jsc.heapSize)} of capacity ${mib(r.jsc.heapCapacity)}, extra ${mib(r.jsc.extra)}, ${r.jsc.objects} objects; memoryUsage heapUsed ${mib(r.heapUsed)} heapTotal ${mib(r.heapTotal)} external ${mib(r.external)} arrayBuffers ${mib(r.arrayBuffers)}` +
          (mi ? `; mimalloc live ${mib(mi.normal + mi.huge)} (huge ${mib(mi.huge)}), committed ${mib(mi.committed)}, purged ${mib(mi.purged)}` : ''),
      )
    }
    if (idle) console.log(`  object types after idle+gc: ${idle.jsc.top.map(([t, n]) => `${t} ${n}`).join(', ')}`)
    if (snapshot) console.log(`  heap snapshot by class (bytes, cells): ${snapshot.map(([n, b, c]) => `${n} ${(b / 1024).toFixed(0)} KiB/${c}`).join(', ')}`)
    if (loaded?.sqlite) console.log(`  sqlite: ${JSON.stringify(loaded.sqlite)}`)
  } finally {
    await service.stop()
  }
  return out
}

/** The child prints `probe reports on port N` after its listening line; spawnServer keeps reading stdout, so ask /proc for the listening sockets instead. */
async function findReportPort(service: Service): Promise<string | undefined> {
  const own = new URL(service.url).port
  const inodes = new Set<string>()
  const { readdirSync, readlinkSync } = await import('node:fs')
  for (const fd of readdirSync(`/proc/${service.proc.pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${service.proc.pid}/fd/${fd}`))
      if (m) inodes.add(m[1] as string)
    } catch {}
  }
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/)
    if (f[3] !== '0A' || !inodes.has(f[9] as string)) continue
    const port = String(Number.parseInt((f[1] as string).split(':')[1] as string, 16))
    if (port !== own) return port
  }
  return undefined
}

/** User + system CPU of a process, in clock ticks (1/100 s). */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return Number(fields[11]) + Number(fields[12])
}

function check(r: { non2xx: number; errors: number; rps: number }): void {
  if (r.non2xx || r.errors) throw new Error(`load failed: ${JSON.stringify(r)}`)
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2)
  const cleanup = new Cleanup()
  try {
    const dataDir = cleanup.dir(tempDir())
    const { ownerId, key } = await makeOwnerAndKey(dataDir)
    const accountId = seed(join(dataDir, 'tenants', `${ownerId}.db`))
    const self = join(import.meta.dir, 'memory-probe.ts')
    const pfinEnv = { LOG_FORMAT: 'off', ...UNLIMITED }
    const pfinBinary = async (smol: boolean): Promise<Target> => {
      const outfile = join(cleanup.dir(tempDir('pfin-probe-bin-')), 'pfin')
      const flags = smol ? ['--compile-exec-argv=--smol'] : []
      const build = Bun.spawnSync(
        ['bun', 'build', 'src/main.ts', 'src/modules/imports/parse-worker.ts', '--compile', '--bytecode', '--format=esm', ...flags, '--outfile', outfile],
        { cwd: ROOT, stdout: 'ignore', stderr: 'inherit' },
      )
      if (build.exitCode !== 0) throw new Error('bun run build failed')
      return { name: smol ? 'pfin-bin-smol' : 'pfin-bin', cmd: [outfile, 'serve'], env: pfinEnv, exe: outfile, inProcess: false, floor: false }
    }
    const targets: Record<string, () => Promise<Target>> = {
      'pfin-src': async () => ({ name: 'pfin-src', cmd: ['bun', self], env: { ...pfinEnv, PROBE_CHILD: 'pfin' }, exe: '', inProcess: true, floor: false }),
      'floor-src': async () => ({
        name: 'floor-src',
        cmd: ['bun', self],
        env: { PROBE_CHILD: 'floor', FLOOR: 'stack' },
        exe: '',
        inProcess: true,
        floor: true,
      }),
      'pfin-bin': () => pfinBinary(false),
      'floor-bin': async () => {
        const outfile = await buildFloor(cleanup)
        return { name: 'floor-bin', cmd: [outfile], env: { FLOOR: 'stack' }, exe: outfile, inProcess: false, floor: true }
      },
      'pfin-src-smol': async () => ({
        name: 'pfin-src-smol',
        cmd: ['bun', '--smol', self],
        env: { ...pfinEnv, PROBE_CHILD: 'pfin' },
        exe: '',
        inProcess: true,
        floor: false,
      }),
      'pfin-bin-smol': () => pfinBinary(true),
    }
    const summary: Record<string, Record<string, number>> = {}
    for (const name of wanted.length ? wanted : ['pfin-src', 'floor-src', 'pfin-bin', 'floor-bin']) {
      const make = targets[name]
      if (!make) throw new Error(`unknown target ${name}; known: ${Object.keys(targets).join(', ')}`)
      const target = await make()
      const floorDir = target.floor ? cleanup.dir(tempDir('pfin-probe-floor-')) : dataDir
      summary[name] = await probe(target, floorDir, key, accountId)
    }
    console.log(
      `\n${ROUNDS} round(s) × ${DURATION}s per phase, ${CONNECTIONS} connections, idle ${IDLE_S}s; load: ${readFileSync('/proc/loadavg', 'utf8').trim()}`,
    )
    for (const [name, out] of Object.entries(summary)) {
      console.log(
        `${name.padEnd(10)} idle ${mib(out.idle ?? 0)}, loaded ${mib(out.loaded ?? 0)}, after gc ${mib(out.afterGc ?? 0)}, idle+gc ${mib(out.idleGc ?? 0)}, after malloc_trim ${mib(out.afterTrim ?? 0)} MiB`,
      )
    }
  } finally {
    await cleanup.run()
  }
}

if (process.env.PROBE_CHILD) await child(process.env.PROBE_CHILD)
else await main()
