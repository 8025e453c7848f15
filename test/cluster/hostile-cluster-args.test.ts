import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { clusterFileWithoutRouter } from '../support/cluster.ts'
import { admin, adminJson, cleanup, integrity, processEnv, tempDir } from '../support/processes.ts'

/**
 * `pfin cluster` given wrong or hostile arguments and cluster files (CONTRACT §31, the CLI's exit
 * codes): each is a usage error, exit 2 with a one-line reason, and changes nothing (the directory
 * byte for byte, the owner's file sound). Pins: node names `__proto__` and `constructor` were
 * taken for nodes (the prototype's) and failed with "The "paths[0]" property must be of type
 * string"; every refusal of an argument exited 1, the code of a command that failed while running;
 * a backend or node name that HAProxy's runtime API or a node could not take was used as written;
 * two nodes on one data folder were taken, and a move between them put the owner's only file aside;
 * a move to a node without control.db froze the owner and then failed with "unable to open database file".
 */

afterAll(cleanup)
setDefaultTimeout(30_000)

const root = tempDir('pfin-hostile-cluster-')
const directory = join(root, 'directory.json')
const dataDir = (node: string) => join(root, `data-${node}`)
const env = processEnv(root)
let clusterFile: string
let owner: string
let before: string

beforeAll(async () => {
  for (const node of ['a', 'b', 'c']) mkdirSync(dataDir(node))
  clusterFile = clusterFileWithoutRouter(root, directory, { a: dataDir('a'), b: dataDir('b'), c: dataDir('c') })
  owner = (await adminJson(processEnv(dataDir('a')), 'owner', 'create', '--name', 'Target', '--currency', 'EUR')).id as string
  // Node b has a control.db (an owner of its own); node c was never started.
  await adminJson(processEnv(dataDir('b')), 'owner', 'create', '--name', 'Other', '--currency', 'EUR')
  await adminJson(env, 'cluster', 'place', owner, '--on', 'a', '--cluster', clusterFile)
  before = readFileSync(directory, 'utf8')
})

async function refused(args: string[], reason: RegExp, file = clusterFile): Promise<void> {
  const result = await admin(env, 'cluster', ...args, '--cluster', file)
  const seen = { args, code: result.code, stderr: result.stderr.trim() }
  expect(seen).toEqual({ args, code: 2, stderr: expect.stringMatching(reason) })
  expect(result.stderr).not.toMatch(/TypeError|\n\s+at /)
}

/** Runs the checks four at a time: each is a process, and the machine has two cores. */
async function inFours(checks: (() => Promise<void>)[]): Promise<void> {
  for (let i = 0; i < checks.length; i += 4) await Promise.all(checks.slice(i, i + 4).map((check) => check()))
}

test('owner ids that are not ids: path parts, upper case, map syntax, newlines, spaces, unicode', async () => {
  const hex = owner.slice('own_'.length)
  const bad = [
    '../x',
    `own_../../${hex}`,
    `own_${hex.toUpperCase()}`,
    `${owner} node_b`,
    `${owner}\nown_${'0'.repeat(32)} node_b`,
    ` ${owner}`,
    `${owner}_`,
    `own_${'０'.repeat(32)}`,
    'own_',
  ]
  await inFours(
    bad.flatMap((id) => [() => refused(['place', id, '--on', 'a'], /is not an owner id/), () => refused(['move', id, '--to', 'b'], /is not an owner id/)]),
  )
})

test('node names that are no node of the file, prototype names included', async () => {
  const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'zz']
  await inFours(
    names.flatMap((name) => [
      () => refused(['place', owner, '--on', name], /no node/),
      () => refused(['move', owner, '--to', name], /no node/),
      () => refused(['failover', name], /no node/),
    ]),
  )
})

test('a move to where the owner is, of an owner not placed, to a node never started; a place where it has no file; a failover without a replica', async () => {
  await refused(['move', owner, '--to', 'a'], /is on a already/)
  await refused(['move', `own_${'0'.repeat(32)}`, '--to', 'b'], /is not placed/)
  await refused(['move', owner, '--to', 'c'], /node c has no control\.db/)
  await refused(['place', owner, '--on', 'b'], /has no file on node b/)
  await refused(['failover', 'a'], /has no replica/)
})

test('cluster files with names HAProxy or a node cannot take, or not a cluster file at all', async () => {
  const spec = JSON.parse(readFileSync(clusterFile, 'utf8'))
  const variants: [string, unknown, RegExp][] = [
    ['backend with a command', { ...spec, nodes: { ...spec.nodes, a: { ...spec.nodes.a, backend: 'node_a; shutdown frontend api' } } }, /backend/],
    ['backend with a newline', { ...spec, nodes: { ...spec.nodes, a: { ...spec.nodes.a, backend: 'node_a\nset map x y z' } } }, /backend/],
    ['node name a node cannot have', { ...spec, nodes: { 'Node A': spec.nodes.a } }, /node name/],
    ['node without a folder', { ...spec, nodes: { a: { backend: 'node_a', replica: null } } }, /dataDir/],
    ['two nodes on one folder', { ...spec, nodes: { ...spec.nodes, b: { ...spec.nodes.b, dataDir: `${spec.nodes.a.dataDir}/.` } } }, /same dataDir/],
    ['router without a map', { ...spec, haproxy: { socket: '/run/haproxy.sock' } }, /haproxy/],
    ['no directory', { nodes: spec.nodes }, /not a pfin cluster file/],
  ]
  for (const [name, content, reason] of variants) {
    const file = join(root, `${name.replaceAll(' ', '-')}.json`)
    writeFileSync(file, JSON.stringify(content))
    await refused(['place', owner, '--on', 'a'], reason, file)
  }
  const garbage = join(root, 'garbage.json')
  writeFileSync(garbage, '{"directory": ')
  await refused(['status'], /cannot be read as a pfin cluster file/, garbage)
})

test('after every refusal the directory is as it was and the owner file is sound', () => {
  expect(readFileSync(directory, 'utf8')).toBe(before)
  expect(integrity(join(dataDir('a'), 'tenants', `${owner}.db`))).toBe('ok')
})
