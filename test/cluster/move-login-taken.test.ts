import { afterAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { routerlessCluster } from '../support/cluster.ts'
import { admin, adminJson, cleanup, processEnv, startServer, withDb } from '../support/processes.ts'

/**
 * A move of an owner whose login name another owner of the new node has (CONTRACT §31, §28: a
 * login is unique within a node's control.db, not across nodes). Pins that the move is refused
 * before anything changes (exit 2, naming both owners), instead of copying the login with INSERT
 * OR REPLACE, which deleted the other owner's login row without a word.
 */

afterAll(cleanup)

const setLogin = (dataDir: string, ownerId: string, login: string) =>
  withDb(join(dataDir, 'control.db'), (db) =>
    db.run('INSERT INTO owner_logins (owner_id, login, password_hash, password_set_at, created_at) VALUES (?, ?, NULL, NULL, ?)', [ownerId, login, Date.now()]),
  )
const loginsOf = (dataDir: string) =>
  withDb(join(dataDir, 'control.db'), (db) => db.query('SELECT owner_id AS owner, login FROM owner_logins ORDER BY login').all(), { readonly: true })

test('a move whose owner login is taken on the new node is refused and changes nothing', async () => {
  const { root, directory, dataDir, clusterFile, envOf } = routerlessCluster('pfin-login-taken-', ['a', 'b'])
  const mover = (await adminJson(envOf('a'), 'owner', 'create', '--name', 'Ana on a', '--currency', 'EUR')).id as string
  const resident = (await adminJson(envOf('b'), 'owner', 'create', '--name', 'Ana on b', '--currency', 'EUR')).id as string
  setLogin(dataDir('a'), mover, 'ana')
  setLogin(dataDir('b'), resident, 'ana')
  await adminJson(processEnv(root), 'cluster', 'place', mover, '--on', 'a', '--cluster', clusterFile)
  const before = readFileSync(directory, 'utf8')
  await startServer(envOf('a'))

  const refused = await admin(processEnv(root), 'cluster', 'move', mover, '--to', 'b', '--cluster', clusterFile)
  expect({ code: refused.code, stderr: refused.stderr }).toEqual({
    code: 2,
    stderr: expect.stringContaining(`the login "ana" of ${mover} belongs to ${resident} on node b`),
  })
  expect(readFileSync(directory, 'utf8')).toBe(before)
  expect(loginsOf(dataDir('b'))).toEqual([{ owner: resident, login: 'ana' }])
}, 30_000)
