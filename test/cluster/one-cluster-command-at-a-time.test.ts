import { afterAll, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { routerlessCluster } from '../support/cluster.ts'
import { admin, adminJson, call, cleanup, integrity, MAIN, processEnv, ROOT, startServer } from '../support/processes.ts'

/**
 * Two `pfin cluster` commands at once, and one killed mid-move (CONTRACT §31). Pins: a second
 * command while a move runs is refused (exit 1, naming the running one) instead of freezing,
 * copying and flipping the same owner again (two moves of one owner both flipped it: writes made
 * on the first new node were lost at the second flip; two commands on different owners could each
 * write back a directory missing the other's change); a move killed with -9 leaves its owner
 * frozen (503 at its node), `status` says which command did not finish, and running the move again
 * takes over and finishes it: one node serves the owner, the directory unfrozen, the file sound;
 * such a move run again that fails before its flip unfreezes the owner where it was (it put back
 * the placement it had read, frozen, so the owner stayed refused).
 */

afterAll(cleanup)

type Directory = { version: number; owners: Record<string, { node: string; epoch: number; frozen?: boolean }> }

test('one cluster command at a time; a move killed mid-way is finished by running it again', async () => {
  const { root, directory, dataDir, clusterFile, envOf } = routerlessCluster('pfin-one-command-', ['a', 'b', 'c'])
  const tool = processEnv(root)
  const made = await adminJson(envOf('a'), 'owner', 'create', '--name', 'Mover', '--currency', 'EUR', '--with-key')
  const owner = made.id as string
  const key = (made.key as { key: string }).key
  const other = (await adminJson(envOf('b'), 'owner', 'create', '--name', 'Other', '--currency', 'EUR')).id as string
  await adminJson(envOf('c'), 'owner', 'create', '--name', 'Third', '--currency', 'EUR')
  await adminJson(tool, 'cluster', 'place', owner, '--on', 'a', '--cluster', clusterFile)
  await adminJson(tool, 'cluster', 'place', other, '--on', 'b', '--cluster', clusterFile)
  const nodeA = await startServer(envOf('a'))
  const read = () => JSON.parse(readFileSync(directory, 'utf8')) as Directory
  expect(
    (await call(nodeA.url, 'POST', '/v1/accounts', { key, body: '{"name":"Main","type":"bank","balance":1,"currency":"EUR"}', idempotencyKey: 'k1' })).status,
  ).toBe(201)

  // Node a stops answering (SIGSTOP): the move freezes the owner and waits for a's acknowledgement.
  process.kill(nodeA.proc.pid, 'SIGSTOP')
  const first = Bun.spawn(['bun', MAIN, 'cluster', 'move', owner, '--to', 'b', '--cluster', clusterFile, '--json'], {
    cwd: ROOT,
    env: tool,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  for (let i = 0; i < 200 && !read().owners[owner]?.frozen; i++) await Bun.sleep(25)
  expect(read().owners[owner]).toEqual({ node: 'a', epoch: 1, frozen: true })
  const frozenVersion = read().version

  // Meanwhile: another move of the same owner, and a place of another owner, are refused and change nothing.
  for (const args of [
    ['move', owner, '--to', 'c'],
    ['place', other, '--on', 'b'],
  ]) {
    const second = await admin(tool, 'cluster', ...args, '--cluster', clusterFile)
    expect({ args, code: second.code }).toEqual({ args, code: 1 })
    expect(second.stderr).toContain(`another pfin cluster command is changing the directory (move ${owner} --to b, pid ${first.pid}`)
  }
  expect(read().version).toBe(frozenVersion)

  // The running move is killed; node a resumes. The owner stays frozen where it was, and status says why.
  first.kill('SIGKILL')
  await first.exited
  process.kill(nodeA.proc.pid, 'SIGCONT')
  expect(read().owners[owner]).toEqual({ node: 'a', epoch: 1, frozen: true })
  // (A node reads the directory within ~10 ms of its change, counted from SIGCONT here.)
  let moving = await call(nodeA.url, 'GET', '/v1/accounts', { key })
  for (let i = 0; i < 40 && moving.status !== 503; i++) moving = await call(nodeA.url, 'GET', '/v1/accounts', { key })
  expect(moving.status).toBe(503)
  expect(moving.headers.get('retry-after')).toBe('1')
  const status = await adminJson(tool, 'cluster', 'status', '--cluster', clusterFile)
  expect(status.command).toMatchObject({ pid: first.pid, command: `move ${owner} --to b`, running: false })

  // Run again, the move takes the lock over and finishes: on b, next epoch, unfrozen; a refuses it.
  const again = await adminJson(tool, 'cluster', 'move', owner, '--to', 'b', '--cluster', clusterFile)
  expect(again).toMatchObject({ from: 'a', to: 'b', epoch: 2 })
  expect(read().owners[owner]).toEqual({ node: 'b', epoch: 2 })
  expect(existsSync(`${directory}.lock`)).toBe(false)
  expect((await adminJson(tool, 'cluster', 'status', '--cluster', clusterFile)).command).toBeNull()
  expect((await call(nodeA.url, 'GET', '/v1/accounts', { key })).status).toBe(421)
  const nodeB = await startServer(envOf('b'))
  const served = await call(nodeB.url, 'GET', '/v1/accounts', { key })
  expect(served.status).toBe(200)
  expect(JSON.parse(served.text).data.map((a: { name: string }) => a.name)).toEqual(['Main'])
  expect(integrity(join(dataDir('b'), 'tenants', `${owner}.db`))).toBe('ok')
}, 30_000)

test('a move run again over an owner left frozen, failing before its flip, unfreezes it where it was', async () => {
  const { root, directory, dataDir, clusterFile, envOf } = routerlessCluster('pfin-resume-fails-', ['a', 'b'])
  const owner = (await adminJson(envOf('a'), 'owner', 'create', '--name', 'Mover', '--currency', 'EUR')).id as string
  await adminJson(envOf('b'), 'owner', 'create', '--name', 'Other', '--currency', 'EUR')
  // Node b cannot take the copy: its tenants folder is a file.
  rmSync(join(dataDir('b'), 'tenants'), { recursive: true })
  writeFileSync(join(dataDir('b'), 'tenants'), '')
  // What a move killed mid-way leaves: the owner frozen on a.
  writeFileSync(directory, JSON.stringify({ version: 5, owners: { [owner]: { node: 'a', epoch: 1, frozen: true } } }))
  await startServer(envOf('a'))
  const failed = await admin(processEnv(root), 'cluster', 'move', owner, '--to', 'b', '--cluster', clusterFile)
  expect(failed.code).toBe(1)
  expect((JSON.parse(readFileSync(directory, 'utf8')) as Directory).owners[owner]).toEqual({ node: 'a', epoch: 1 })
}, 20_000)
