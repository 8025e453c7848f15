import { Database } from 'bun:sqlite'
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { hostname, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { prepareDir } from '../db/data-dir.ts'
import { isId } from '../db/ids.ts'
import { copyDatabase } from '../db/sqlite.ts'
import { ACK_FILE, type Directory, NODE_NAME, readDirectory, writeDirectory } from '../platform/cluster.ts'
import { integrityProblems } from './backup.ts'
import { litestreamBinary, replicaOf } from './litestream.ts'

/**
 * `pfin cluster` (CONTRACT §31): the only writer of the directory (owner → node, epoch) and of
 * the router's map. It works on each node's DATA_DIR as a path (one machine, or mounts), and
 * on HAProxy through its runtime API (a Unix socket): the map changes live, without a reload.
 */

export interface ClusterNodeSpec {
  dataDir: string
  /** The HAProxy backend that reaches this node. */
  backend: string
  /** Where the node's Litestream replicates (CLUSTER_REPLICA); null: none. */
  replica: string | null
}

export interface ClusterSpec {
  directory: string
  haproxy: { socket: string; map: string } | null
  nodes: Record<string, ClusterNodeSpec>
}

export class ClusterError extends Error {}
/** A wrong argument or cluster file, found before anything was changed (the CLI's exit code 2). */
export class ClusterUsageError extends ClusterError {}

type Progress = (message: string) => void

/** An HAProxy backend name (it goes into a map line and a runtime API command): letters, digits, `_ - . :`. */
const BACKEND = /^[A-Za-z0-9_.:-]{1,64}$/

/** Reads and checks the cluster file: every name that goes into the directory, a map line or a path is what it should be. */
export function readClusterSpec(path: string): ClusterSpec {
  let spec: ClusterSpec
  try {
    spec = JSON.parse(readFileSync(path, 'utf8')) as ClusterSpec
  } catch (error) {
    throw new ClusterUsageError(`${path} cannot be read as a pfin cluster file: ${(error as Error).message}`)
  }
  const wrong = (what: string) => new ClusterUsageError(`${path}: ${what} (see docs/operations.md, "Running a cluster")`)
  if (typeof spec?.directory !== 'string' || spec.directory === '' || typeof spec.nodes !== 'object' || spec.nodes === null)
    throw wrong('not a pfin cluster file: "directory" and "nodes" are required')
  const { haproxy } = spec
  if (haproxy !== null && (typeof haproxy?.socket !== 'string' || typeof haproxy.map !== 'string')) throw wrong('"haproxy" must be null or {"socket", "map"}')
  const folders = new Map<string, string>()
  for (const [name, node] of Object.entries(spec.nodes)) {
    if (!NODE_NAME.test(name)) throw wrong(`node name ${JSON.stringify(name)} is not one a node can have (CLUSTER_NODE: lower-case letters, digits, -)`)
    if (typeof node?.dataDir !== 'string' || node.dataDir === '') throw wrong(`node ${name} needs "dataDir"`)
    // Two nodes on one folder: a move would put the owner's only file aside as the source's old copy.
    const folder = resolve(node.dataDir)
    const sharing = folders.get(folder)
    if (sharing) throw wrong(`nodes ${sharing} and ${name} have the same dataDir ${folder}; each node has its own`)
    folders.set(folder, name)
    if (typeof node.backend !== 'string' || !BACKEND.test(node.backend))
      throw wrong(`node ${name}'s backend ${JSON.stringify(node.backend)} is not an HAProxy backend name (letters, digits, _ - . :)`)
    if (node.replica !== null && node.replica !== undefined && !/^(file|s3):\/\/./.test(String(node.replica)))
      throw wrong(`node ${name}'s replica must be null or a file:// or s3:// URL`)
  }
  return spec
}

function nodeOf(spec: ClusterSpec, name: string): ClusterNodeSpec {
  // Own keys only: `__proto__` or `constructor` is no node.
  const node = Object.hasOwn(spec.nodes, name) ? spec.nodes[name] : undefined
  if (!node) throw new ClusterUsageError(`no node ${JSON.stringify(name)} in the cluster file; nodes: ${Object.keys(spec.nodes).join(', ')}`)
  return node
}

const tenantPath = (node: ClusterNodeSpec, ownerId: string) => join(node.dataDir, 'tenants', `${ownerId}.db`)
/** The router's map is keyed by the owner id's hex, the third `_`-separated word of `Bearer pfk_own_<hex>_…`. */
const mapKey = (ownerId: string) => ownerId.slice('own_'.length)
const FROZEN_BACKEND = 'frozen'

/** One command on HAProxy's runtime API; its answer. */
export function haproxyCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const conn = connect(socket, () => conn.end(`${command}\n`))
    conn.on('data', (chunk) => chunks.push(Buffer.from(chunk)))
    conn.on('error', reject)
    conn.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })
}

/** Points the owner at `backend` in the live map and in the map file (read again at HAProxy's next start). */
async function route(spec: ClusterSpec, ownerId: string, backend: string): Promise<void> {
  if (!spec.haproxy) return
  const { socket, map } = spec.haproxy
  const key = mapKey(ownerId)
  let answer = await haproxyCommand(socket, `set map ${map} ${key} ${backend}`)
  if (/not found/i.test(answer)) answer = await haproxyCommand(socket, `add map ${map} ${key} ${backend}`)
  if (answer.trim() !== '') throw new ClusterError(`HAProxy refused the map change for ${ownerId}: ${answer.trim()}`)
  const lines = existsSync(map)
    ? readFileSync(map, 'utf8')
        .split('\n')
        .filter((line) => line.trim() && !line.startsWith(`${key} `))
    : []
  lines.push(`${key} ${backend}`)
  writeFileSync(`${map}.tmp`, `${lines.join('\n')}\n`)
  renameSync(`${map}.tmp`, map)
}

/** Who is changing the directory: the `pfin cluster` command holding `<directory>.lock`. */
export interface DirectoryHolder {
  pid: number
  host: string
  command: string
  since: number
}

const lockPath = (spec: ClusterSpec) => `${spec.directory}.lock`

/** Whether the holder still runs: a process on this machine is asked; one on another machine is taken to run. */
function running(holder: DirectoryHolder): boolean {
  if (holder.host !== hostname()) return true
  try {
    process.kill(holder.pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The command holding the directory now, or that held it and was killed (`running` false); null when none. */
export function directoryHolder(spec: ClusterSpec): (DirectoryHolder & { running: boolean }) | null {
  try {
    const holder = JSON.parse(readFileSync(lockPath(spec), 'utf8')) as DirectoryHolder
    return { ...holder, running: running(holder) }
  } catch {
    return null
  }
}

/**
 * Runs `work` as the only `pfin cluster` command changing the directory: two at once would each
 * read, change and write it (one's change lost), and two moves of one owner would both copy it and
 * both flip it (writes made on the first new node lost at the second flip). The lock is a file
 * made with O_EXCL beside the directory, naming the command; one whose process is gone (killed
 * mid-move) is taken over, and its frozen owners are what the new command finds.
 */
async function holdingDirectory<T>(spec: ClusterSpec, command: string, work: () => Promise<T>): Promise<T> {
  const path = lockPath(spec)
  const me: DirectoryHolder = { pid: process.pid, host: hostname(), command, since: Date.now() }
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(path, JSON.stringify(me), { flag: 'wx' })
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error
      const holder = directoryHolder(spec)
      if (holder?.running)
        throw new ClusterError(
          `another pfin cluster command is changing the directory (${holder.command}, pid ${holder.pid} on ${holder.host}, since ${new Date(holder.since).toISOString()}): run this one when it has ended`,
        )
      // Its process is gone (or the file is empty, cut short by a crash): the lock is stale.
      rmSync(path, { force: true })
    }
  }
  try {
    return await work()
  } finally {
    rmSync(path, { force: true })
  }
}

function changeDirectory(spec: ClusterSpec, change: (directory: Directory) => void): Directory {
  const directory = readDirectory(spec.directory)
  change(directory)
  directory.version++
  writeDirectory(spec.directory, directory)
  return directory
}

function ownerIdChecked(ownerId: string): string {
  if (!isId('own', ownerId)) throw new ClusterUsageError(`${JSON.stringify(ownerId)} is not an owner id (own_ and 32 lower-case hex digits)`)
  return ownerId
}

/** Places an owner made on `nodeName` (with `pfin owner create` over its DATA_DIR) in the directory and the router. */
export function place(spec: ClusterSpec, ownerId: string, nodeName: string): Promise<{ owner: string; node: string; epoch: number }> {
  // The arguments are checked before the lock: a wrong one is a usage error whatever else runs.
  ownerIdChecked(ownerId)
  nodeOf(spec, nodeName)
  return holdingDirectory(spec, `place ${ownerId} --on ${nodeName}`, () => placeHeld(spec, ownerId, nodeName))
}

async function placeHeld(spec: ClusterSpec, ownerId: string, nodeName: string): Promise<{ owner: string; node: string; epoch: number }> {
  const node = nodeOf(spec, nodeName)
  if (!existsSync(tenantPath(node, ownerId)))
    throw new ClusterUsageError(`owner ${ownerId} has no file on node ${nodeName}; create it there first (pfin owner create --data-dir ${node.dataDir})`)
  const current = readDirectory(spec.directory).owners[ownerId]
  if (current && current.node !== nodeName) throw new ClusterUsageError(`owner ${ownerId} is placed on ${current.node}; use pfin cluster move`)
  const epoch = current?.epoch ?? 1
  changeDirectory(spec, (d) => placeIn(d, ownerId, { node: nodeName, epoch }))
  await route(spec, ownerId, node.backend)
  return { owner: ownerId, node: nodeName, epoch }
}

/**
 * An owner placed (or moved) onto a node: a node marked lost by a failover is in service again
 * from then on, and a failover may restore owners onto it.
 */
function placeIn(directory: Directory, ownerId: string, placement: { node: string; epoch: number }): void {
  directory.owners[ownerId] = placement
  const lost = (directory.lost ?? []).filter((name) => name !== placement.node)
  if (lost.length > 0) directory.lost = lost
  else delete directory.lost
}

/** Waits until the node has seen directory `version` and its requests of frozen owners have ended. */
async function awaitAck(node: ClusterNodeSpec, version: number, timeoutMs: number): Promise<boolean> {
  const path = join(node.dataDir, ACK_FILE)
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    try {
      if ((JSON.parse(readFileSync(path, 'utf8')) as { version: number }).version >= version) return true
    } catch {}
    await Bun.sleep(5)
  }
  return false
}

/** What must be the same in the copy as in the original: the feed's high-water mark, row counts, money sums. */
export function highWaterMark(path: string): Record<string, number | string> {
  const db = new Database(path, { readonly: true, safeIntegers: true })
  try {
    const one = (sql: string) => String(Object.values(db.query(sql).get() as Record<string, unknown>)[0] ?? 0)
    const mark: Record<string, number | string> = { feedSeq: one('SELECT coalesce(max(seq), 0) FROM change_log') }
    for (const table of ['accounts', 'categories', 'payees', 'tags', 'transactions', 'applied_requests']) mark[table] = one(`SELECT count(*) FROM ${table}`)
    mark.transactionAmountSum = one('SELECT coalesce(sum(amount), 0) FROM transactions')
    return mark
  } finally {
    db.close()
  }
}

/**
 * A login name is unique within a control.db, not across nodes: the owner's login that another
 * owner of the new node already has. Copied, it would clash with that owner's login row (an
 * INSERT OR REPLACE once deleted it without a word); so it is refused, naming both.
 */
const LOGIN_TAKEN = `SELECT l.login, t.owner_id AS other FROM source.owner_logins l
  JOIN main.owner_logins t ON t.login = l.login AND t.owner_id <> l.owner_id WHERE l.owner_id = ?`

function loginTaken(db: Database, ownerId: string, nodeName: string): ClusterError | null {
  const taken = db.query<{ login: string; other: string }, [string]>(LOGIN_TAKEN).get(ownerId)
  if (!taken) return null
  return new ClusterUsageError(
    `the login ${JSON.stringify(taken.login)} of ${ownerId} belongs to ${taken.other} on node ${nodeName}: give one of them another (pfin owner set-password --login over its node's data folder), then run this again`,
  )
}

/** Refuses, before anything changes, a move whose owner's login another owner of the new node has. */
function assertLoginFree(from: string, to: string, ownerId: string, nodeName: string): void {
  const db = new Database(to, { readonly: true })
  try {
    db.run('ATTACH DATABASE ? AS source', [from])
    const taken = loginTaken(db, ownerId, nodeName)
    if (taken) throw taken
  } finally {
    db.close()
  }
}

/**
 * Makes the owner's rows of control.db (owner, keys, sign-in, grants; answers if asked) in `to`
 * those of `from`, through SQLite. The owner's rows `to` held before go first: a node that served
 * the owner once (killed, failed over, back with its disk) keeps keys and answers the cluster
 * never had or has since revoked, which would otherwise count again.
 */
function copyControlRows(from: string, to: string, ownerId: string, answers: boolean, nodeName: string): void {
  const db = new Database(to, { readwrite: true, create: false })
  try {
    db.run('PRAGMA busy_timeout = 5000')
    // The node's Litestream is the only checkpointer of its control.db (CONTRACT §31).
    db.run('PRAGMA wal_autocheckpoint = 0')
    db.run('ATTACH DATABASE ? AS source', [from])
    db.transaction(() => {
      const taken = loginTaken(db, ownerId, nodeName)
      if (taken) throw new ClusterError(taken.message)
      // schedule_due: the owner's next auto-posting date, so the new node's sweep posts it (§29).
      const byOwner = ['owners:id', 'api_keys:owner_id', 'owner_logins:owner_id', 'owner_invites:owner_id', 'oauth_grants:owner_id', 'schedule_due:owner_id']
      // The answers' copies (§8) are taken on a move; on a failover the owner's file has its own,
      // and copies the node kept from before are as stale as its keys.
      if (answers) byOwner.push('idempotency_records:owner_id')
      else db.run('DELETE FROM main.idempotency_records WHERE owner_id = ?', [ownerId])
      db.run('DELETE FROM main.oauth_tokens WHERE grant_id IN (SELECT id FROM main.oauth_grants WHERE owner_id = ?)', [ownerId])
      for (const entry of byOwner) {
        const [table, column] = entry.split(':') as [string, string]
        db.run(`DELETE FROM main.${table} WHERE ${column} = ?`, [ownerId])
        db.run(`INSERT INTO main.${table} SELECT * FROM source.${table} WHERE ${column} = ?`, [ownerId])
      }
      db.run('INSERT INTO main.oauth_tokens SELECT * FROM source.oauth_tokens WHERE grant_id IN (SELECT id FROM source.oauth_grants WHERE owner_id = ?)', [
        ownerId,
      ])
    }).immediate()
    db.run('DETACH DATABASE source')
  } finally {
    db.close()
  }
}

export type MoveResult = {
  owner: string
  from: string
  to: string
  epoch: number
  frozenMs: number
  /** Where each millisecond of the freeze went (CONTRACT §31). */
  phases: { freezeMs: number; copyMs: number; checkMs: number; controlMs: number; flipMs: number }
  mark: Record<string, number | string>
  /** Where the source node's old copy went (`moved/…` under its DATA_DIR), or null when it was left in place. */
  source: string | null
}

/** How long the tool waits for the source node to confirm it let go of the owner before it puts the old copy aside. */
const RELEASE_TIMEOUT_MS = 10_000

/**
 * Puts the source node's old copy of a moved owner aside, into `<DATA_DIR>/moved/<ownerId>.epoch<N>.db`
 * (with its -wal and -shm, renamed together: a rename copies no byte, and SQLite reads the set as
 * it was). Only once the node has confirmed the directory that places the owner elsewhere: it
 * has closed its connection by then and refuses the owner (421). Returns the new path, or null.
 */
async function putSourceAside(node: ClusterNodeSpec, ownerId: string, epoch: number, version: number): Promise<string | null> {
  if (!(await awaitAck(node, version, RELEASE_TIMEOUT_MS))) return null
  const original = tenantPath(node, ownerId)
  if (!existsSync(original)) return null
  let aside = movedPath(node, `${ownerId}.epoch${epoch}.db`)
  if (existsSync(aside)) aside = movedPath(node, `${ownerId}.epoch${epoch}.${Date.now()}.db`)
  renameSet(original, aside)
  return aside
}

/** `name` in the node's `moved/` folder, made if it is not there yet. */
function movedPath(node: ClusterNodeSpec, name: string): string {
  const folder = join(node.dataDir, 'moved')
  prepareDir(folder)
  return join(folder, name)
}

const SET = ['-wal', '-shm', '']

/** Renames a database with its -wal and -shm, the log first: a reader that finds the file without its log would miss committed pages. */
function renameSet(from: string, to: string): void {
  for (const suffix of SET) if (existsSync(from + suffix)) renameSync(from + suffix, to + suffix)
}

/**
 * Renames the copy made for `node` into the owner's place there. A database already at that place
 * (a node that held the owner before, killed or kept with --keep-source) is first put aside with
 * its log into `<DATA_DIR>/moved/<ownerId>.found-<ms>.db`: its -wal would otherwise stay beside
 * the new file, and SQLite, which cannot tell that the log belongs to another file, would apply
 * its frames over the copy at the next open (old rows back, indexes that disagree).
 */
function installCopy(node: ClusterNodeSpec, ownerId: string, copy: string, progress: Progress): void {
  const target = tenantPath(node, ownerId)
  if (SET.some((suffix) => existsSync(target + suffix))) {
    const aside = movedPath(node, `${ownerId}.found-${Date.now()}.db`)
    renameSet(target, aside)
    progress(`an older copy of ${ownerId} was in the way on the new node: kept as ${aside}`)
  }
  renameSync(copy, target)
}

/**
 * A planned move: freeze the owner at the router and at its node (which waits for its requests
 * under way), copy its file with VACUUM INTO and its control rows, compare the high-water marks,
 * then place it on the new node with the next epoch and point the router there. No checkpoint
 * runs while it is frozen. Any failure before the flip unfreezes it where it was. After the flip,
 * the source's old copy goes to its `moved/` folder (`keepSource`: left where it was).
 */
export function move(
  spec: ClusterSpec,
  ownerId: string,
  toName: string,
  progress: Progress = () => {},
  options: { keepSource?: boolean } = {},
): Promise<MoveResult> {
  ownerIdChecked(ownerId)
  nodeOf(spec, toName)
  return holdingDirectory(spec, `move ${ownerId} --to ${toName}`, () => moveHeld(spec, ownerId, toName, progress, options))
}

async function moveHeld(spec: ClusterSpec, ownerId: string, toName: string, progress: Progress, options: { keepSource?: boolean }): Promise<MoveResult> {
  const to = nodeOf(spec, toName)
  const placement = readDirectory(spec.directory).owners[ownerId]
  if (!placement) throw new ClusterUsageError(`owner ${ownerId} is not placed; use pfin cluster place`)
  if (placement.node === toName) throw new ClusterUsageError(`owner ${ownerId} is on ${toName} already`)
  const from = nodeOf(spec, placement.node)
  // Its keys go into the new node's control.db, which the node makes when it first starts.
  if (!existsSync(join(to.dataDir, 'control.db')))
    throw new ClusterUsageError(`node ${toName} has no control.db in ${to.dataDir}: start pfin there once (CLUSTER_NODE=${toName}) before moving owners to it`)
  assertLoginFree(join(from.dataDir, 'control.db'), join(to.dataDir, 'control.db'), ownerId, toName)
  const started = performance.now()
  let at = started
  const lap = () => {
    const now = performance.now()
    const ms = Math.round(now - at)
    at = now
    return ms
  }
  await route(spec, ownerId, FROZEN_BACKEND)
  const frozen = changeDirectory(spec, (d) => {
    d.owners[ownerId] = { ...placement, frozen: true }
  })
  if (placement.frozen) progress(`${ownerId} was left frozen by a command that did not finish: moving it now`)
  const unfreeze = async () => {
    changeDirectory(spec, (d) => {
      d.owners[ownerId] = { node: placement.node, epoch: placement.epoch }
    })
    await route(spec, ownerId, from.backend)
  }
  let mark: Record<string, number | string>
  const phases = { freezeMs: 0, copyMs: 0, checkMs: 0, controlMs: 0, flipMs: 0 }
  try {
    if (!(await awaitAck(from, frozen.version, 10_000))) throw new ClusterError(`node ${placement.node} did not confirm the freeze within 10 s`)
    phases.freezeMs = lap()
    progress('frozen; copying')
    const target = tenantPath(to, ownerId)
    const partial = `${target}.moving`
    prepareDir(dirname(target))
    rmSync(partial, { force: true })
    copyDatabase(tenantPath(from, ownerId), partial)
    phases.copyMs = lap()
    mark = highWaterMark(tenantPath(from, ownerId))
    const copied = highWaterMark(partial)
    if (JSON.stringify(mark) !== JSON.stringify(copied))
      throw new ClusterError(`the copy differs from the original: ${JSON.stringify(mark)} vs ${JSON.stringify(copied)}`)
    phases.checkMs = lap()
    copyControlRows(join(from.dataDir, 'control.db'), join(to.dataDir, 'control.db'), ownerId, true, toName)
    installCopy(to, ownerId, partial, progress)
    phases.controlMs = lap()
  } catch (error) {
    await unfreeze()
    throw error
  }
  const epoch = placement.epoch + 1
  const flipped = changeDirectory(spec, (d) => placeIn(d, ownerId, { node: toName, epoch }))
  await route(spec, ownerId, to.backend)
  phases.flipMs = lap()
  const frozenMs = Math.round(performance.now() - started)
  const source = options.keepSource ? null : await putSourceAside(from, ownerId, placement.epoch, flipped.version)
  if (!options.keepSource && source === null) progress(`node ${placement.node} did not confirm in time: its old copy of ${ownerId} is left in place`)
  return { owner: ownerId, from: placement.node, to: toName, epoch, frozenMs, phases, mark, source }
}

async function restoreReplica(url: string, output: string): Promise<void> {
  const proc = Bun.spawn([litestreamBinary(), 'restore', '-o', output, url], { stdout: 'pipe', stderr: 'pipe' })
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new ClusterError(`litestream restore of ${url} failed (${code}): ${stderr.trim().slice(-400)}`)
}

/** How long a failover waits for the node it gives up to show it is running after all. */
const ALIVE_WAIT_MS = 1500

export type FailoverResult = {
  node: string
  owners: { owner: string; to: string; epoch: number }[]
}

/**
 * After a node is lost: each of its owners is restored from the node's replica onto the live
 * node with the fewest owners, with a new feed epoch (cursors answer 410, as after a restore),
 * its keys and sign-in from the replica of the node's control.db, the next epoch, and the
 * router's map. The node is marked lost: it serves nothing until placed again.
 */
export function failover(spec: ClusterSpec, lostName: string, progress: Progress = () => {}): Promise<FailoverResult> {
  nodeOf(spec, lostName)
  return holdingDirectory(spec, `failover ${lostName}`, () => failoverHeld(spec, lostName, progress))
}

async function failoverHeld(spec: ClusterSpec, lostName: string, progress: Progress): Promise<FailoverResult> {
  const lost = nodeOf(spec, lostName)
  if (!lost.replica) throw new ClusterUsageError(`node ${lostName} has no replica (CLUSTER_REPLICA): nothing to restore from`)
  const before = readDirectory(spec.directory)
  const owners = Object.entries(before.owners).filter(([, p]) => p.node === lostName)
  const live = Object.keys(spec.nodes).filter((name) => name !== lostName && !(before.lost ?? []).includes(name))
  if (live.length === 0) throw new ClusterError('no live node to restore onto')
  for (const [owner] of owners) await route(spec, owner, FROZEN_BACKEND)
  const frozen = changeDirectory(spec, (d) => {
    d.lost = [...new Set([...(d.lost ?? []), lostName])]
    for (const [owner] of owners) d.owners[owner] = { ...(d.owners[owner] as { node: string; epoch: number }), frozen: true }
  })
  // A node that acknowledges the freeze is running: its newest writes are in its files, not yet
  // all in its replica, so a failover would lose them. Put everything back and say so.
  if (await awaitAck(lost, frozen.version, ALIVE_WAIT_MS)) {
    changeDirectory(spec, (d) => {
      d.lost = before.lost
      for (const [owner, placement] of owners) d.owners[owner] = placement
    })
    for (const [owner, placement] of owners) if (!placement.frozen) await route(spec, owner, lost.backend)
    throw new ClusterError(
      `node ${lostName} is running (it acknowledged directory version ${frozen.version}): a failover would lose the writes its replica does not have yet. Move its owners with pfin cluster move, or stop it first; nothing was changed`,
    )
  }
  const work = mkdtempSync(join(tmpdir(), 'pfin-failover-'))
  const result: FailoverResult = { node: lostName, owners: [] }
  try {
    const control = join(work, 'control.db')
    await restoreReplica(replicaOf(lost.replica, null), control)
    const load = new Map(live.map((name) => [name, Object.values(before.owners).filter((p) => p.node === name).length]))
    for (const [owner, placement] of owners) {
      const toName = [...load.entries()].sort((a, b) => a[1] - b[1])[0]?.[0] as string
      load.set(toName, (load.get(toName) ?? 0) + 1)
      const to = nodeOf(spec, toName)
      const restored = join(work, `${owner}.db`)
      progress(`restoring ${owner} onto ${toName}`)
      await restoreReplica(replicaOf(lost.replica, owner), restored)
      const problems = integrityProblems(restored)
      if (problems.length > 0) throw new ClusterError(`the replica of ${owner} is damaged: ${problems.join('; ')}`)
      const db = new Database(restored, { readwrite: true })
      // Writes after the replica's last sync are gone: sync clients start again (410), as after a restore.
      db.run('UPDATE feed_state SET epoch = lower(hex(randomblob(8))) WHERE id = 1')
      db.close()
      const partial = `${tenantPath(to, owner)}.moving`
      prepareDir(dirname(partial))
      // A failover killed part way may have left its copy: VACUUM INTO does not write over a file.
      rmSync(partial, { force: true })
      copyDatabase(restored, partial)
      // Answers are not copied: the owner's file keeps its own, in step with its data (CONTRACT §8).
      copyControlRows(control, join(to.dataDir, 'control.db'), owner, false, toName)
      installCopy(to, owner, partial, progress)
      const epoch = placement.epoch + 1
      changeDirectory(spec, (d) => {
        d.owners[owner] = { node: toName, epoch }
      })
      await route(spec, owner, to.backend)
      result.owners.push({ owner, to: toName, epoch })
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  return result
}

export type OldKey = {
  node: string
  owner: string
  ownerName: string
  id: string
  name: string | null
  scopes: string[]
  createdAt: number
  lastUsedAt: number | null
  expiresAt: number | null
  replacedBy: string | null
}

/**
 * The live keys of every node whose text does not name their owner (`pfk_<keyId>_…`, made before
 * CONTRACT §31): the router cannot place them. Never a secret: ids, names, scopes and times. Read
 * with read-only connections (they never checkpoint). A node whose control.db cannot be read is
 * named in `unreadable` with the reason.
 */
export function oldKeys(spec: ClusterSpec, now = Date.now()): { keys: OldKey[]; unreadable: { node: string; reason: string }[] } {
  const keys: OldKey[] = []
  const unreadable: { node: string; reason: string }[] = []
  for (const [name, node] of Object.entries(spec.nodes)) {
    const path = join(node.dataDir, 'control.db')
    if (!existsSync(path)) {
      unreadable.push({ node: name, reason: `no ${path}` })
      continue
    }
    let db: Database | undefined
    try {
      db = new Database(path, { readonly: true })
      db.run('PRAGMA busy_timeout = 5000')
      const rows = db
        .query<Omit<OldKey, 'node' | 'scopes'> & { scopes: string }, [number]>(
          `SELECT k.owner_id AS owner, o.name AS ownerName, k.id, k.name, k.scopes, k.created_at AS createdAt, k.last_used_at AS lastUsedAt,
                  k.expires_at AS expiresAt, k.replaced_by AS replacedBy
           FROM api_keys k JOIN owners o ON o.id = k.owner_id
           WHERE k.names_owner = 0 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?)
           ORDER BY k.owner_id, k.created_at`,
        )
        .all(now)
      for (const row of rows) keys.push({ node: name, ...row, scopes: JSON.parse(row.scopes) as string[] })
    } catch (error) {
      // A node still on a version before key forms were recorded: start it with this one first (it migrates control.db).
      unreadable.push({ node: name, reason: String((error as Error).message ?? error) })
    } finally {
      db?.close()
    }
  }
  return { keys, unreadable }
}
