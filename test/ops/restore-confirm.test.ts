import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { admin, adminJson, call, cleanup, MAIN, processEnv, ROOT, startServer, tempDir, withDb } from '../support/processes.ts'

/**
 * restore asks first and keeps what it replaces (CONTRACT §18): without --yes it says what it
 * would replace and changes nothing; with --yes the replaced databases are kept, as databases
 * holding the pre-restore data, in DATA_DIR/replaced-<UTC time>/.
 */

afterAll(cleanup)

let env: Record<string, string>
let dataDir: string
let backupDir: string
let ownerId: string
let lateKey: string
const TENANT = () => join('tenants', `${ownerId}.db`)

const sha = async (path: string) => new Bun.CryptoHasher('sha256').update(await Bun.file(path).arrayBuffer()).digest('hex')
const countRows = (path: string, table: string) => withDb(path, (db) => (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n)

/** Three transactions before the backup, three after it, and a key made after it. */
beforeAll(async () => {
  dataDir = tempDir('pfin-restore-confirm-')
  env = processEnv(dataDir, { LOG_FORMAT: 'off' })
  const created = await adminJson(env, 'owner', 'create', '--name', 'Ana', '--with-key')
  ownerId = created.id as string
  const key = (created.key as { key: string }).key
  const server = await startServer(env)
  const post = (path: string, body: unknown) => call(server.url, 'POST', path, { key, body: JSON.stringify(body), idempotencyKey: crypto.randomUUID() })
  const account = JSON.parse((await post('/v1/accounts', { name: 'Checking', type: 'bank', balance: 100, currency: 'EUR' })).text).data.id
  const spend = (i: number) => post('/v1/transactions', { accountId: account, amount: 1.25, date: '2026-11-20', externalId: `t-${i}` })
  for (let i = 0; i < 3; i++) expect((await spend(i)).status).toBe(201)
  backupDir = join(tempDir('pfin-restore-confirm-out-'), 'b')
  await adminJson(env, 'backup', '--out', backupDir)
  for (let i = 3; i < 6; i++) expect((await spend(i)).status).toBe(201)
  server.proc.kill('SIGTERM')
  await server.proc.exited
  lateKey = (await adminJson(env, 'key', 'create', '--owner', ownerId, '--name', 'made after the backup')).id as string
}, 60_000)

describe('restore', () => {
  test('without --yes: prints the plan (last write, transactions the backup lacks), exits 2 and changes nothing', async () => {
    const before = { control: await sha(join(dataDir, 'control.db')), tenant: await sha(join(dataDir, TENANT())), files: readdirSync(dataDir).sort() }
    const planned = await admin(env, 'restore', '--from', backupDir)
    expect(planned.code).toBe(2)
    expect(planned.stderr).toContain(`then: bun run admin restore --from ${backupDir} --yes --data-dir ${dataDir}`)
    const plan = JSON.parse(planned.stdout)
    expect(plan).toMatchObject({ restored: false, from: backupDir, control: true, owners: [ownerId], untouched: [] })
    const owner = plan.replacing.find((file: { ownerId: string | null }) => file.ownerId === ownerId)
    expect(owner).toMatchObject({ path: TENANT(), name: 'Ana', exists: true, lostTransactions: 3, unreadable: null })
    expect(owner.lastWriteAt).toBeGreaterThan(plan.backupCreatedAt)
    const control = plan.replacing.find((file: { ownerId: string | null }) => file.ownerId === null)
    expect(control).toMatchObject({ path: 'control.db', exists: true })
    expect(control.lastWriteAt).toBeGreaterThan(plan.backupCreatedAt)

    // The same plan for a person: what is replaced, and what would be lost.
    const proc = Bun.spawn(['bun', MAIN, 'restore', '--from', backupDir], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
    const [text, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
    expect(code).toBe(2)
    expect(text).toContain(`${ownerId} (Ana): last written`)
    expect(text).toContain('3 transaction(s) not in the backup would be lost')
    expect(text).toContain(`${dataDir}/replaced-<UTC time>/`)

    expect({ control: await sha(join(dataDir, 'control.db')), tenant: await sha(join(dataDir, TENANT())), files: readdirSync(dataDir).sort() }).toEqual(before)
    expect(countRows(join(dataDir, TENANT()), 'transactions')).toBe(6)
  })

  test('--owner that the backup does not hold, or a --from that is no backup, is a usage error', async () => {
    const wrongOwner = await admin(env, 'restore', '--from', backupDir, '--owner', 'own_00000000000000000000000000000000', '--yes')
    expect({ code: wrongOwner.code, names: wrongOwner.stderr.includes('is not in the backup') }).toEqual({ code: 2, names: true })
    const noBackup = await admin(env, 'restore', '--from', dataDir, '--yes')
    expect({ code: noBackup.code, says: noBackup.stderr.includes('is not a pfin backup') }).toEqual({ code: 2, says: true })
    expect(readdirSync(dataDir).filter((name) => name.startsWith('replaced-'))).toEqual([])
  })

  test('with --yes: restores, and keeps the replaced control.db and owner file as databases holding the pre-restore data', async () => {
    const restored = await adminJson(env, 'restore', '--from', backupDir, '--yes')
    expect(restored).toMatchObject({ restored: true, control: true, owners: [ownerId] })
    const kept = restored.replacedDir as string
    expect(kept).toStartWith(join(dataDir, 'replaced-'))
    expect(kept).toMatch(/replaced-\d{8}T\d{6}Z$/)
    expect(statSync(kept).mode & 0o777).toBe(0o700)
    expect(readdirSync(kept).sort()).toEqual(['control.db', 'tenants'])
    expect(readdirSync(join(kept, 'tenants'))).toEqual([`${ownerId}.db`])

    // The kept files are whole databases with what was there before the restore.
    for (const file of ['control.db', TENANT()]) {
      expect(withDb(join(kept, file), (db) => db.query('PRAGMA integrity_check').get(), { readonly: true })).toEqual({ integrity_check: 'ok' })
    }
    expect(countRows(join(kept, TENANT()), 'transactions')).toBe(6)
    expect(withDb(join(kept, 'control.db'), (db) => db.query('SELECT name FROM api_keys WHERE id = ?').get(lateKey), { readonly: true })).toEqual({
      name: 'made after the backup',
    })
    // The live data is the backup's.
    expect(countRows(join(dataDir, TENANT()), 'transactions')).toBe(3)
    expect(existsSync(join(dataDir, 'control.db.before-restore'))).toBe(false)
  })

  test('without --json the outcome names the folder and says it can be removed', async () => {
    const proc = Bun.spawn(['bun', MAIN, 'restore', '--from', backupDir, '--yes'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
    const [text, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
    expect(code).toBe(0)
    const folders = readdirSync(dataDir).filter((name) => name.startsWith('replaced-'))
    expect(folders).toHaveLength(2)
    const newest = folders.sort().at(-1) as string
    expect(text).toContain(`The files it replaced are kept in ${join(dataDir, newest)}/; remove that folder once you no longer need them`)
    expect(text).toContain('no transaction lost')
  })
})
