import type { Subprocess } from 'bun'
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { call, processEnv, tempDir } from './processes.ts'

/** HAProxy's path, or '' where it is not installed (apt-get install haproxy; .ci/run installs it). */
export const haproxyPath = spawnSync('sh', ['-c', 'command -v haproxy'], { encoding: 'utf8' }).stdout.trim()

export async function freePort(): Promise<number> {
  const server = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = server.port
  server.stop(true)
  return port
}

/**
 * The router of a test cluster (CONTRACT §31, docs/operations.md): the owner's hex from the
 * credential, looked up in `map` (changed live by `pfin cluster` through `socket`), a backend
 * per node (`node_<name>`), `any` for requests without an owner, and `frozen` answering 503.
 */
export function haproxyConfig(port: number, socket: string, map: string, nodes: Record<string, string>): string {
  const problem = JSON.stringify({
    type: 'urn:pfin:problem:owner_moving',
    title: 'Owner moving',
    status: 503,
    code: 'owner_moving',
    detail: 'This owner is moving to another node; retry in a second',
  })
  const server = (name: string) => `  server ${name} ${new URL(nodes[name] as string).host}`
  return [
    'global',
    `  stats socket ${socket} mode 600 level admin`,
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    'frontend api',
    `  bind 127.0.0.1:${port}`,
    // `Bearer pfk_own_<hex>_key_…`: the third word between underscores is the owner's hex.
    '  http-request set-var(txn.owner) req.hdr(authorization),word(3,_)',
    `  use_backend %[var(txn.owner),map(${map},any)]`,
    '  default_backend any',
    ...Object.keys(nodes).flatMap((name) => [`backend node_${name}`, server(name)]),
    'backend any',
    '  balance roundrobin',
    ...Object.keys(nodes).map(server),
    'backend frozen',
    `  http-request return status 503 content-type application/problem+json hdr retry-after 1 string ${JSON.stringify(problem)}`,
    '',
  ].join('\n')
}

/**
 * A test cluster's front: HAProxy before the nodes on a free port (its configuration, runtime socket
 * and map under `root`), started and answering /healthz (or five seconds tried), and the cluster file
 * `pfin cluster` reads (docs/operations.md): the directory, the router's socket and map, each node's
 * folder and replica.
 */
export async function startFront(
  root: string,
  cluster: { directory: string; socket: string; map: string; nodes: Record<string, { url: string; dataDir: string; replica: string }> },
): Promise<{ router: Subprocess; front: string; clusterFile: string }> {
  const port = await freePort()
  const config = join(root, 'haproxy.cfg')
  const entries = Object.entries(cluster.nodes)
  writeFileSync(config, haproxyConfig(port, cluster.socket, cluster.map, Object.fromEntries(entries.map(([n, node]) => [n, node.url]))))
  const router = Bun.spawn([haproxyPath, '-db', '-f', config], { stdout: 'ignore', stderr: 'pipe' })
  const front = `http://127.0.0.1:${port}`
  for (let i = 0; i < 50 && (await call(front, 'GET', '/healthz', { timeoutMs: 500 })).status !== 200; i++) await Bun.sleep(100)
  const clusterFile = join(root, 'cluster.json')
  const nodes = Object.fromEntries(entries.map(([n, node]) => [n, { dataDir: node.dataDir, backend: `node_${n}`, replica: node.replica }]))
  writeFileSync(clusterFile, JSON.stringify({ directory: cluster.directory, haproxy: { socket: cluster.socket, map: cluster.map }, nodes }))
  return { router, front, clusterFile }
}

/**
 * A cluster file without a router (`haproxy: null`: `pfin cluster` changes only the directory),
 * for tests of the admin tool and the nodes alone: node name → its DATA_DIR, backend `node_<name>`.
 */
export function clusterFileWithoutRouter(root: string, directory: string, nodes: Record<string, string>): string {
  const path = join(root, 'cluster.json')
  const entries = Object.entries(nodes).map(([name, dataDir]) => [name, { dataDir, backend: `node_${name}`, replica: null }])
  writeFileSync(path, JSON.stringify({ directory, haproxy: null, nodes: Object.fromEntries(entries) }))
  return path
}

/**
 * A cluster without a router in a new temporary folder: each node's DATA_DIR made, the cluster
 * file written (`clusterFileWithoutRouter`), and each node's environment (CLUSTER_NODE and
 * CLUSTER_DIRECTORY, the access log off, `extra` on top).
 */
export function routerlessCluster(prefix: string, nodes: string[], options: { replicated?: string[] } = {}) {
  const root = tempDir(prefix)
  const directory = join(root, 'directory.json')
  const dataDir = (node: string) => join(root, `data-${node}`)
  const replica = (node: string) => `file://${join(root, `replica-${node}`)}`
  for (const node of nodes) mkdirSync(dataDir(node))
  const clusterFile = clusterFileWithoutRouter(root, directory, Object.fromEntries(nodes.map((node) => [node, dataDir(node)])))
  // The nodes named in `replicated` name a replica in the cluster file (what a failover restores from).
  if (options.replicated?.length) {
    const spec = JSON.parse(readFileSync(clusterFile, 'utf8'))
    for (const node of options.replicated) spec.nodes[node].replica = replica(node)
    writeFileSync(clusterFile, JSON.stringify(spec))
  }
  const envOf = (node: string, extra: Record<string, string> = {}) =>
    processEnv(dataDir(node), { CLUSTER_NODE: node, CLUSTER_DIRECTORY: directory, LOG_FORMAT: 'off', ...extra })
  return { root, directory, dataDir, replica, clusterFile, envOf }
}

/**
 * The folders and files of a cluster behind HAProxy in a new temporary folder (for `startFront`):
 * the directory, the router's socket and (empty) map, each node's DATA_DIR (made for `nodes`) and
 * replica, and each node's environment with Litestream replicating it.
 */
export function routedCluster(prefix: string, nodes: readonly string[]) {
  const root = tempDir(prefix)
  const directory = join(root, 'directory.json')
  const socket = join(root, 'haproxy.sock')
  const map = join(root, 'owners.map')
  writeFileSync(map, '')
  const dataDir = (node: string) => join(root, `data-${node}`)
  const replica = (node: string) => `file://${join(root, 'replicas', node)}`
  for (const node of nodes) mkdirSync(dataDir(node), { recursive: true })
  const envOf = (node: string) =>
    processEnv(dataDir(node), { CLUSTER_NODE: node, CLUSTER_DIRECTORY: directory, CLUSTER_REPLICA: replica(node), LOG_FORMAT: 'off' })
  return { root, directory, socket, map, dataDir, replica, envOf }
}
