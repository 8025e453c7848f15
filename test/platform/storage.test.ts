import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { migrations as controlMigrations } from '../../drizzle/control/manifest.ts'
import { migrations as tenantMigrations } from '../../drizzle/tenant/manifest.ts'
import { newId } from '../../src/db/ids.ts'
import { profile } from '../../src/db/tenant/schema.ts'
import { TenantRegistry, TenantUnavailableError } from '../../src/db/tenant/registry.ts'
import { startTestServer, tempDir, type TestServer } from '../support/harness.ts'
import { openFile } from './fixtures.ts'

/** CONTRACT §11: one control database, one migrated tenant file per owner; the bounded registry. */

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

const tables = (db: Database) =>
  db
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .all()
    .map((row) => row.name)

/** A pragma's current value on a connection (the first column of its one row). */
const pragmaOf = (db: Database, name: string): unknown => Object.values(db.query(`PRAGMA ${name}`).get() as Record<string, unknown>)[0]

function migrationTimes(db: Database): number[] {
  return db
    .query<{ created_at: number | bigint }, []>('SELECT created_at FROM "__drizzle_migrations" ORDER BY created_at')
    .all()
    .map((row) => Number(row.created_at))
}

describe('tenant files', () => {
  test('an owner gets DATA_DIR/tenants/<ownerId>.db, migrated, holding its profile and nothing of anyone else', async () => {
    const a = await server.owner({ name: 'Alice' })
    const b = await server.owner({ name: 'Bob' })
    const files = readdirSync(join(server.dataDir, 'tenants')).filter((f) => f.endsWith('.db'))
    expect(files).toContain(`${a.id}.db`)
    expect(files).toContain(`${b.id}.db`)
    expect(existsSync(join(server.dataDir, 'control.db'))).toBe(true)

    const db = openFile(server.dataDir, `tenants/${a.id}.db`, true)
    try {
      expect(migrationTimes(db)).toEqual(tenantMigrations.map((m) => m.when))
      expect(tables(db)).toEqual(
        expect.arrayContaining(['__drizzle_migrations', 'profile', 'applied_requests', 'accounts', 'categories', 'payees', 'transactions']),
      )
      // Control data never lands in a tenant file.
      expect(tables(db)).not.toContain('api_keys')
      expect(tables(db)).not.toContain('owners')
      const people = db.query<{ id: string; name: string }, []>('SELECT id, name FROM profile').all()
      expect(people).toEqual([{ id: a.id, name: 'Alice' }])
      expect(db.query<{ journal_mode: string }, []>('PRAGMA journal_mode').get()?.journal_mode).toBe('wal')
    } finally {
      db.close()
    }
  })

  test('the server’s tenant handle runs with WAL, synchronous=FULL, foreign keys on and a busy timeout', async () => {
    const owner = await server.owner()
    const handle = server.platform.tenants.get(owner.id).sqlite
    const pragma = (name: string) => Number(pragmaOf(handle, name))
    expect(String(pragmaOf(handle, 'journal_mode'))).toBe('wal')
    expect(pragma('foreign_keys')).toBe(1)
    expect(pragma('synchronous')).toBe(2) // FULL
    expect(pragma('busy_timeout')).toBeGreaterThan(0)
    // See TENANT_PRAGMAS: a checkpoint every 1,000 pages and a log cut back to 4 MiB, so a full
    // disk recovers; SQLite's 2 MiB cache until an import; a page limit behind the owner's quota;
    // space freed by purges can be given back.
    expect(pragma('cache_size')).toBe(-2000)
    expect(pragma('wal_autocheckpoint')).toBe(1000)
    expect(pragma('journal_size_limit')).toBe(4 * 1024 * 1024)
    // 1 GiB of 4 KiB pages, and a 5% reserve above it so that an owner at its quota can delete.
    expect(pragma('max_page_count')).toBe(262_144 + 13_108)
    expect(pragma('auto_vacuum')).toBe(2)
    // Foreign keys are enforced on this connection, not just declared.
    handle.run('CREATE TEMP TABLE fk_parent (id TEXT PRIMARY KEY)')
    handle.run('CREATE TEMP TABLE fk_child (parent_id TEXT REFERENCES fk_parent (id))')
    try {
      expect(() => handle.run("INSERT INTO fk_child (parent_id) VALUES ('missing')")).toThrow(/FOREIGN KEY/)
    } finally {
      handle.run('DROP TABLE fk_child')
      handle.run('DROP TABLE fk_parent')
    }
  })

  test('an owner that imports keeps an 8 MiB page cache until it rests; a resting owner is back on the default', async () => {
    const owner = await server.owner()
    const tenants = server.platform.tenants
    const cacheSize = () => Number(pragmaOf(tenants.get(owner.id).sqlite, 'cache_size'))
    const account = await server.request('POST', '/v1/accounts', { key: owner.key, body: { name: 'Main', type: 'bank', balance: 100, currency: 'EUR' } })
    expect(account.status).toBe(201)
    expect(cacheSize()).toBe(-2000)
    const item = { externalId: 'bank-1', accountId: account.json.data.id, amount: 12.5, date: '2026-11-02' }
    expect((await server.request('POST', '/v1/transactions/batch', { key: owner.key, body: { items: [item], dryRun: true } })).status).toBe(200)
    expect(cacheSize()).toBe(-8192)
    expect((await server.request('POST', '/v1/transactions/batch', { key: owner.key, body: { items: [item] } })).status).toBe(200)
    expect(cacheSize()).toBe(-8192)

    tenants.get(owner.id).touch(0)
    expect(tenants.restIdle(1_000)).toEqual([])
    expect(cacheSize()).toBe(-2000)
  })

  test('the control database is migrated, in WAL mode, with its tables', () => {
    const control = server.platform.control.sqlite
    expect(migrationTimes(control)).toEqual(controlMigrations.map((m) => m.when))
    expect(tables(control)).toEqual(expect.arrayContaining(['owners', 'api_keys', 'idempotency_records', 'rate_limit_counters']))
    expect(String(pragmaOf(control, 'journal_mode'))).toBe('wal')
    expect(Number(pragmaOf(control, 'foreign_keys'))).toBe(1)
  })

  test('API keys are stored as argon2id hashes, never in plaintext', async () => {
    const owner = await server.owner()
    const secret = owner.key.split('_').slice(3).join('_')
    expect(secret.length).toBeGreaterThanOrEqual(43)
    const row = server.platform.control.sqlite.query<{ secret_hash: string }, [string]>('SELECT secret_hash FROM api_keys WHERE id = ?').get(owner.keyId)
    expect(row?.secret_hash).toStartWith('$argon2id$')
    const controlFile = Bun.file(join(server.dataDir, 'control.db'))
    expect(await controlFile.text()).not.toContain(secret)
  })

  test('re-opening an existing tenant file does not migrate it again', () => {
    const dataDir = tempDir()
    try {
      const ownerId = newId('own')
      const first = new TenantRegistry(dataDir, 4)
      first.create(ownerId)
      first.closeAll()
      const second = new TenantRegistry(dataDir, 4)
      expect(migrationTimes(second.get(ownerId).sqlite)).toEqual(tenantMigrations.map((m) => m.when))
      second.closeAll()
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

describe('TenantRegistry', () => {
  let dataDir: string
  beforeAll(() => {
    dataDir = tempDir()
  })
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  const addProfile = (registry: TenantRegistry, ownerId: string, name: string) =>
    registry
      .create(ownerId)
      .db.insert(profile)
      .values({ id: ownerId, name, email: null, country: null, defaultCurrency: null, preferredLanguage: null, createdAt: Date.now() })
      .run()

  test('with capacity 2, opening a third owner closes the least recently used handle; re-opening works', () => {
    const registry = new TenantRegistry(dataDir, 2)
    const [a, b, c] = [newId('own'), newId('own'), newId('own')]
    const first = registry.create(a)
    addProfile(registry, a, 'A')
    registry.create(b)
    expect(registry.size).toBe(2)
    registry.create(c)
    expect(registry.size).toBe(2)
    expect(registry.openTenants().map((t) => t.ownerId)).toEqual([b, c])
    // The evicted handle is really closed.
    expect(() => first.sqlite.query('SELECT 1').get()).toThrow()

    const again = registry.get(a)
    expect(again).not.toBe(first)
    expect(again.sqlite.query<{ name: string }, []>('SELECT name FROM profile').get()?.name).toBe('A')
    expect(registry.size).toBe(2)
    registry.closeAll()
    expect(registry.size).toBe(0)
    expect(() => again.sqlite.query('SELECT 1').get()).toThrow()
  })

  test('using a handle makes it most recently used', () => {
    const registry = new TenantRegistry(dataDir, 2)
    const [a, b, c] = [newId('own'), newId('own'), newId('own')]
    const ha = registry.create(a)
    const hb = registry.create(b)
    expect(registry.get(a)).toBe(ha)
    registry.create(c)
    expect(() => hb.sqlite.query('SELECT 1').get()).toThrow()
    expect(Number(ha.sqlite.query<{ one: bigint }, []>('SELECT 1 AS one').get()?.one)).toBe(1)
    registry.closeAll()
  })

  describe('resting idle owners', () => {
    const walBytes = (registry: TenantRegistry, ownerId: string) =>
      existsSync(`${registry.pathFor(ownerId)}-wal`) ? statSync(`${registry.pathFor(ownerId)}-wal`).size : 0
    const names = (registry: TenantRegistry, ownerId: string) =>
      registry
        .get(ownerId)
        .sqlite.query<{ name: string }, []>('SELECT name FROM profile ORDER BY name')
        .all()
        .map((row) => row.name)

    test('an owner idle past the limit has its log folded into its file and stays usable; a recently used one is left alone', () => {
      const registry = new TenantRegistry(dataDir, 4)
      const [idle, busy] = [newId('own'), newId('own')]
      try {
        addProfile(registry, idle, 'Idle')
        addProfile(registry, busy, 'Busy')
        expect(walBytes(registry, idle)).toBeGreaterThan(0)
        const now = Date.now()
        registry.get(idle).touch(now - 60_000)
        registry.get(busy).touch(now - 1_000)

        expect(registry.restIdle(30_000, now)).toEqual([])
        const [idleTenant, busyTenant] = [idle, busy].map((id) => registry.openTenants().find((t) => t.ownerId === id))
        expect(idleTenant?.resting).toBe(true)
        expect(busyTenant?.resting).toBe(false)
        expect(walBytes(registry, idle)).toBe(0)
        expect(walBytes(registry, busy)).toBeGreaterThan(0)

        // The same handle serves the next request, which ends the rest.
        expect(names(registry, idle)).toEqual(['Idle'])
        expect(idleTenant?.resting).toBe(false)
        registry.get(idle).db.update(profile).set({ name: 'Idle again' }).run()
        expect(names(registry, idle)).toEqual(['Idle again'])
      } finally {
        registry.closeAll()
      }
    })

    test('a rest that fails is reported once, and the owner is not tried again until a request uses it', () => {
      const registry = new TenantRegistry(dataDir, 4)
      const ownerId = newId('own')
      addProfile(registry, ownerId, 'Broken')
      const tenant = registry.get(ownerId)
      // A connection that fails every statement (closed behind the registry's back).
      tenant.sqlite.close()
      try {
        const failed = registry.restIdle(0, Date.now() + 1)
        expect(failed.map((f) => f.ownerId)).toEqual([ownerId])
        expect(registry.restIdle(0, Date.now() + 2)).toEqual([])
        tenant.touch()
        expect(registry.restIdle(0, Date.now() + 3).map((f) => f.ownerId)).toEqual([ownerId])
      } finally {
        registry.evict(ownerId)
      }
    })

    test('a reader holding an old snapshot does not make the rest wait: it checkpoints what it can, and the next round finishes', () => {
      const registry = new TenantRegistry(dataDir, 4)
      const ownerId = newId('own')
      addProfile(registry, ownerId, 'First')
      const reader = openFile(dataDir, `tenants/${ownerId}.db`, true)
      try {
        reader.run('BEGIN')
        expect(reader.query<{ n: number }, []>('SELECT count(*) AS n FROM profile').get()?.n).toBe(1)
        registry.get(ownerId).db.update(profile).set({ name: 'Second' }).run()

        const started = performance.now()
        expect(registry.restIdle(0, Date.now() + 1)).toEqual([])
        // The connection's busy timeout is 10 s; the rest does not use it.
        expect(performance.now() - started).toBeLessThan(5_000)
        expect(walBytes(registry, ownerId)).toBeGreaterThan(0)
        expect(reader.query<{ name: string }, []>('SELECT name FROM profile').get()?.name).toBe('First')
        // Not resting yet: the next round tries again by itself.
        expect(registry.openTenants()[0]?.resting).toBe(false)
        reader.run('COMMIT')

        expect(registry.restIdle(0, Date.now() + 1)).toEqual([])
        expect(registry.openTenants()[0]?.resting).toBe(true)
        expect(walBytes(registry, ownerId)).toBe(0)
        expect(names(registry, ownerId)).toEqual(['Second'])
        // The connection waits for locks again afterwards.
        expect(Number(pragmaOf(registry.get(ownerId).sqlite, 'busy_timeout'))).toBe(10_000)
      } finally {
        reader.close()
        registry.closeAll()
      }
    })
  })

  test('get never makes a file: a missing or emptied one is unavailable (and stays missing); create makes it', () => {
    const registry = new TenantRegistry(dataDir, 4)
    const [missing, emptied, made] = [newId('own'), newId('own'), newId('own')]
    try {
      expect(() => registry.get(missing)).toThrow(TenantUnavailableError)
      expect(existsSync(registry.pathFor(missing))).toBe(false)
      mkdirSync(registry.dir, { recursive: true })
      writeFileSync(registry.pathFor(emptied), '')
      expect(() => registry.get(emptied)).toThrow(/holds no database/)
      expect(statSync(registry.pathFor(emptied)).size).toBe(0)
      registry.create(made)
      registry.evict(made)
      expect(registry.get(made).sqlite.query('SELECT count(*) AS n FROM profile').get()).toEqual({ n: 0n })
    } finally {
      registry.closeAll()
    }
  })

  test('a file whose tables are still only in its write-ahead log (a crash before any checkpoint) opens with them', () => {
    const registry = new TenantRegistry(dataDir, 4)
    const [writer, copy] = [newId('own'), newId('own')]
    mkdirSync(registry.dir, { recursive: true })
    const raw = new Database(registry.pathFor(writer), { create: true })
    try {
      raw.run('PRAGMA journal_mode = WAL')
      raw.run('PRAGMA wal_autocheckpoint = 0')
      raw.run('CREATE TABLE kept (note TEXT)')
      raw.run("INSERT INTO kept VALUES ('in the log')")
      // The file and its log as a crash would leave them: the tables are in the log alone.
      copyFileSync(registry.pathFor(writer), registry.pathFor(copy))
      copyFileSync(`${registry.pathFor(writer)}-wal`, `${registry.pathFor(copy)}-wal`)
      // Without its log, the same file holds no table: it is refused.
      const alone = newId('own')
      copyFileSync(registry.pathFor(writer), registry.pathFor(alone))
      expect(() => registry.get(alone)).toThrow(/holds no database/)
      expect(registry.get(copy).sqlite.query('SELECT note FROM kept').get()).toEqual({ note: 'in the log' })
    } finally {
      raw.close()
      registry.closeAll()
    }
  })

  test('pathFor refuses malformed owner ids and keeps paths inside DATA_DIR/tenants', () => {
    const registry = new TenantRegistry(dataDir, 2)
    const bad = [
      '../x',
      'own_../../etc',
      `own_${'0'.repeat(32)}/../../x`,
      `own_${'0'.repeat(31)}`,
      `own_${'A'.repeat(32)}`,
      `acct_${'0'.repeat(32)}`,
      '',
      '/etc/passwd',
      `own_${'0'.repeat(32)}\u0000`,
      `own_${'0'.repeat(32)}.db`,
    ]
    for (const id of bad) {
      expect(() => registry.pathFor(id)).toThrow()
      expect(() => registry.get(id)).toThrow()
    }
    const good = newId('own')
    expect(registry.pathFor(good)).toBe(join(registry.dir, `${good}.db`))
    expect(registry.dir).toBe(join(dataDir, 'tenants'))
    // Nothing was created for the refused ids.
    expect(readdirSync(registry.dir).every((name) => /^own_[0-9a-f]{32}\.db(-wal|-shm)?$/.test(name))).toBe(true)
    registry.closeAll()
  })
})
