import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { admin, adminJson, call, cleanup, processEnv, startServer, tempDir, withDb } from '../support/processes.ts'

/**
 * CONTRACT §18 as an operator uses it: a backup taken while the server writes, verified, then
 * restored into the same DATA_DIR with the server stopped. Real processes, real files.
 */

afterAll(cleanup)

type Row = Record<string, unknown>
const cents = (value: unknown) => Math.round(Number(value) * 100)

/** The owner's data as the API shows it: what a restore must bring back exactly. */
async function snapshot(url: string, key: string) {
  const get = async (path: string) => {
    const items: Row[] = []
    let cursor: string | null = null
    do {
      const res = await call(url, 'GET', `${path}${path.includes('?') ? '&' : '?'}limit=200${cursor ? `&cursor=${cursor}` : ''}`, { key })
      expect(res.status).toBe(200)
      const body = JSON.parse(res.text) as { data: Row[]; nextCursor: string | null }
      items.push(...body.data)
      cursor = body.nextCursor
    } while (cursor)
    return items
  }
  return { accounts: await get('/v1/accounts?includeArchived=true'), payees: await get('/v1/payees'), transactions: await get('/v1/transactions') }
}

/** Balances and payee totals must follow from the rows (nothing half restored). */
function expectConsistent(data: Awaited<ReturnType<typeof snapshot>>, opening: Map<string, number>) {
  for (const account of data.accounts) {
    const moved = data.transactions.filter((t) => t.accountId === account.id).reduce((sum, t) => sum - cents(t.amount), 0)
    expect(cents(account.balance)).toBe((opening.get(account.id as string) ?? 0) + moved)
  }
  for (const payee of data.payees) {
    const own = data.transactions.filter((t) => t.payeeId === payee.id)
    expect(payee.transactionCount).toBe(own.length)
    expect(cents(payee.totalSpent)).toBe(own.filter((t) => cents(t.amount) > 0).reduce((sum, t) => sum + cents(t.amount), 0))
  }
}

describe('backup and restore', () => {
  test('a backup taken under write load restores every row, balance and payee total as of the backup; later retries are not told "done"; old cursors expire', async () => {
    const dataDir = tempDir('pfin-backup-')
    const env = processEnv(dataDir)
    const { id: ownerId } = await adminJson(env, 'owner', 'create', '--name', 'Ana')
    const { key } = (await adminJson(env, 'key', 'create', '--owner', String(ownerId))) as { key: string }
    const server = await startServer(env)
    const opening = new Map<string, number>()
    const accounts: string[] = []
    for (const name of ['Checking', 'Savings']) {
      const res = await call(server.url, 'POST', '/v1/accounts', {
        key,
        body: JSON.stringify({ name, type: 'bank', balance: 1000, currency: 'EUR' }),
        idempotencyKey: crypto.randomUUID(),
      })
      const id = JSON.parse(res.text).data.id as string
      accounts.push(id)
      opening.set(id, 100_000)
    }

    // Writers keep going while the backup runs; every acknowledged write is remembered with its time.
    const acknowledged: { key: string; at: number; body: string }[] = []
    let writing = true
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const body = JSON.stringify({
          accountId: accounts[i % 2],
          amount: ((i % 7) + 1) * 1.25,
          date: '2026-11-20',
          payeeName: `Shop ${i % 5}`,
          externalId: `w-${i}`,
        })
        const idempotencyKey = `write-${i}`
        const res = await call(server.url, 'POST', '/v1/transactions', { key, body, idempotencyKey })
        if (res.status === 201) acknowledged.push({ key: idempotencyKey, at: Date.now(), body })
      }
    })()
    await Bun.sleep(300)
    const out = join(tempDir('pfin-backups-'), 'b1')
    const backupStarted = Date.now()
    const taken = await adminJson(env, 'backup', '--out', out)
    const backupDone = Date.now()
    expect(taken).toMatchObject({ out, owners: 1 })
    await Bun.sleep(300)
    writing = false
    await writer
    const beforeRestore = await snapshot(server.url, key)
    const feed = JSON.parse((await call(server.url, 'GET', '/v1/changes', { key })).text) as { nextCursor: string }

    expect(await adminJson(env, 'backup', 'verify', out)).toMatchObject({ ok: true, problems: [] })
    // Refused while the server holds DATA_DIR.
    const refused = await admin(env, 'restore', '--from', out, '--yes')
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('DATA_DIR')

    server.proc.kill('SIGTERM')
    await server.proc.exited
    expect(await adminJson(env, 'restore', '--from', out, '--yes')).toMatchObject({ owners: [ownerId], control: true })
    const again = await startServer(env)
    const restored = await snapshot(again.url, key)

    // Everything acknowledged before the backup began is there; nothing acknowledged after it ended.
    const restoredIds = new Set(restored.transactions.map((t) => t.externalId))
    const before = acknowledged.filter((write) => write.at < backupStarted)
    const after = acknowledged.filter((write) => write.at > backupDone)
    expect(before.length).toBeGreaterThan(0)
    expect(after.length).toBeGreaterThan(0)
    for (const write of before) expect(restoredIds.has(JSON.parse(write.body).externalId)).toBe(true)
    for (const write of after) expect(restoredIds.has(JSON.parse(write.body).externalId)).toBe(false)
    expect(restored.transactions.length).toBeLessThan(beforeRestore.transactions.length)
    expectConsistent(restored, opening)
    for (const file of readdirSync(join(dataDir, 'tenants')).filter((name) => name.endsWith('.db'))) {
      withDb(join(dataDir, 'tenants', file), (db) => expect(db.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' }))
    }

    // A write the restore took away is not "done": its retry runs again (201, not a replay).
    const lost = after[0] as (typeof after)[number]
    const retry = await call(again.url, 'POST', '/v1/transactions', { key, body: lost.body, idempotencyKey: lost.key })
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBeNull()
    // A write the backup kept is still replayed.
    const kept = before[0] as (typeof before)[number]
    const replay = await call(again.url, 'POST', '/v1/transactions', { key, body: kept.body, idempotencyKey: kept.key })
    expect(replay.headers.get('idempotent-replayed')).toBe('true')

    // Sync clients learn that they must resync.
    const stale = await call(again.url, 'GET', `/v1/changes?cursor=${feed.nextCursor}`, { key })
    expect(stale.status).toBe(410)
    expect(JSON.parse(stale.text).code).toBe('cursor_expired')
  }, 90_000)

  test('a damaged backup fails verify and is not restored; an owner can be restored alone', async () => {
    const dataDir = tempDir('pfin-verify-')
    const env = processEnv(dataDir)
    const { id: a } = await adminJson(env, 'owner', 'create', '--name', 'A')
    const { id: b } = await adminJson(env, 'owner', 'create', '--name', 'B')
    const out = join(tempDir('pfin-backups-'), 'b')
    await adminJson(env, 'backup', '--out', out)
    expect(existsSync(join(out, 'manifest.json'))).toBe(true)

    // Restore one owner: the other's file is left as it is.
    await adminJson(env, 'owner', 'export', '--owner', String(b), '--out', join(tempDir('pfin-x-'), 'b.db'))
    expect(await adminJson(env, 'restore', '--from', out, '--owner', String(a), '--yes')).toMatchObject({ owners: [a], control: false })

    const file = join(out, 'tenants', `${a}.db`)
    const bytes = await Bun.file(file).bytes()
    bytes[bytes.length - 100] = (bytes[bytes.length - 100] as number) ^ 0xff
    writeFileSync(file, bytes)
    const verify = await admin(env, 'backup', 'verify', out)
    // Its output as a failed command is backup-verify-failure-output.test.ts's.
    expect({ code: verify.code, names: verify.stderr.includes(`tenants/${a}.db`) }).toEqual({ code: 1, names: true })
    const restore = await admin(env, 'restore', '--from', out, '--yes')
    expect(restore.code).toBe(1)
    expect(restore.stderr).toContain('does not verify')
  }, 60_000)

  test('an owner deleted since the backup and restored alone comes back with its data, its keys listed but revoked', async () => {
    const dataDir = tempDir('pfin-deleted-owner-')
    const env = processEnv(dataDir)
    const { id: owner } = await adminJson(env, 'owner', 'create', '--name', 'Gone')
    const key = await adminJson(env, 'key', 'create', '--owner', String(owner))
    const out = join(tempDir('pfin-backups-'), 'b')
    await adminJson(env, 'backup', '--out', out)
    await adminJson(env, 'owner', 'delete', '--owner', String(owner), '--yes')
    expect(await adminJson(env, 'restore', '--from', out, '--owner', String(owner), '--yes')).toMatchObject({ owners: [owner] })
    const { keys } = (await adminJson(env, 'key', 'list', '--owner', String(owner))) as { keys: { id: string; revokedAt: number | null }[] }
    expect(keys.map((k) => [k.id, k.revokedAt !== null])).toEqual([[String(key.id), true]])
    const server = await startServer(env)
    try {
      expect((await call(server.url, 'GET', '/v1/me', { key: String(key.key) })).status).toBe(401)
      const fresh = await adminJson(env, 'key', 'create', '--owner', String(owner))
      expect((await call(server.url, 'GET', '/v1/me', { key: String(fresh.key) })).status).toBe(200)
    } finally {
      server.proc.kill('SIGTERM')
      await server.proc.exited
    }
  }, 60_000)

  test('a backup folder that exists is refused, and an interrupted backup never looks whole', async () => {
    const dataDir = tempDir('pfin-exists-')
    const env = processEnv(dataDir)
    await adminJson(env, 'owner', 'create', '--name', 'A')
    const parent = tempDir('pfin-backups-')
    // A refused output path is a usage error (exit 2), as for owner export --out.
    const taken = await admin(env, 'backup', '--out', parent)
    expect(taken.code).toBe(2)
    expect(taken.stderr).toContain('already exists')
    // Cut a backup short: only a hidden partial folder may be left, never one with a manifest.
    const proc = Bun.spawn(['bun', 'src/main.ts', 'backup', '--out', join(parent, 'cut')], {
      cwd: join(import.meta.dir, '..', '..'),
      env,
      stdout: 'ignore',
      stderr: 'ignore',
    })
    await Bun.sleep(150)
    proc.kill('SIGKILL')
    await proc.exited
    const whole = existsSync(join(parent, 'cut'))
    if (whole) expect(existsSync(join(parent, 'cut', 'manifest.json'))).toBe(true)
    for (const name of readdirSync(parent).filter((n) => n.includes('.partial-'))) expect(existsSync(join(parent, name, 'manifest.json'))).toBe(false)
  }, 60_000)

  test('scheduled backups: the server takes one when none is recent and keeps the newest BACKUP_KEEP', async () => {
    const dataDir = tempDir('pfin-scheduled-')
    const backupDir = tempDir('pfin-scheduled-out-')
    // Two old backups already there: with BACKUP_KEEP=2 the oldest goes once the new one is written.
    const env = processEnv(dataDir, { BACKUP_DIR: backupDir, BACKUP_KEEP: '2', BACKUP_INTERVAL_HOURS: '24' })
    await adminJson(env, 'owner', 'create', '--name', 'A')
    for (const name of ['pfin-20200101T000000Z', 'pfin-20200102T000000Z']) await adminJson(env, 'backup', '--out', join(backupDir, name))
    // Make them old, so a new one is due at once.
    const past = new Date('2020-01-03T00:00:00Z')
    for (const name of ['pfin-20200101T000000Z', 'pfin-20200102T000000Z']) {
      const { utimesSync } = await import('node:fs')
      utimesSync(join(backupDir, name, 'manifest.json'), past, past)
    }
    const server = await startServer(env)
    const deadline = Date.now() + 20_000
    let names: string[] = []
    while (Date.now() < deadline) {
      names = readdirSync(backupDir)
        .filter((name) => name.startsWith('pfin-'))
        .sort()
      if (names.length === 2 && names[0] === 'pfin-20200102T000000Z' && existsSync(join(backupDir, names[1] as string, 'manifest.json'))) break
      await Bun.sleep(200)
    }
    expect(names[0]).toBe('pfin-20200102T000000Z')
    expect(names).toHaveLength(2)
    expect(await adminJson(env, 'backup', 'verify', join(backupDir, names[1] as string))).toMatchObject({ ok: true })
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
  }, 60_000)
})
