import { Database } from 'bun:sqlite'
import { existsSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { migrations as controlMigrations } from '../../drizzle/control/manifest.ts'
import { openDatabase } from '../db/sqlite.ts'

/**
 * Keys are credentials, not data: what a restore keeps of the control database it replaces
 * (CONTRACT §18). Rows move between control databases of possibly different pfin versions (a
 * backup from before a column was added), so they are copied by the columns both sides have.
 */

/** `(columns) SELECT columns FROM schema.table`, over the columns main's table and the attached one share. */
function rowsOf(db: Database, schema: string, table: string): string {
  const names = (from: string) =>
    db
      .query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${table}', '${from}')`)
      .all()
      .map((row) => row.name)
  const theirs = new Set(names(schema))
  const shared = names('main')
    .filter((name) => theirs.has(name))
    .map((name) => `"${name}"`)
    .join(', ')
  return `(${shared}) SELECT ${shared} FROM ${schema}.${table}`
}

/**
 * An owner missing from the current control database (deleted since) comes back, its keys
 * listed but revoked: deleting the owner ended them, and whether one was revoked or leaked
 * before that is no longer known. The operator makes a new key (`key create`).
 */
export function bringBackOwner(control: Database, backupControl: string, ownerId: string): void {
  if (control.query('SELECT 1 FROM owners WHERE id = ?').get(ownerId) !== null) return
  control.run('ATTACH DATABASE ? AS saved', [backupControl])
  try {
    control.transaction(() => {
      control.run(`INSERT INTO main.owners ${rowsOf(control, 'saved', 'owners')} WHERE id = ?`, [ownerId])
      control.run(`INSERT OR IGNORE INTO main.api_keys ${rowsOf(control, 'saved', 'api_keys')} WHERE owner_id = ?`, [ownerId])
      control.run('UPDATE api_keys SET revoked_at = ? WHERE owner_id = ? AND revoked_at IS NULL', [Date.now(), ownerId])
    })()
  } finally {
    control.run('DETACH DATABASE saved')
  }
}

/** What a whole restore kept of the control database it replaced. */
export interface KeptCredentials {
  /** Keys revoked since the backup, revoked again in the restored control.db. */
  revokedKeys: number
  /** Keys made since the backup (for owners the restored control.db knows), kept. */
  newKeys: number
  /** Owners created since the backup: not in it, so their files were left as they are, and their rows, keys and stored answers kept. */
  newOwners: string[]
  /** False when the replaced control.db could not be read (missing or damaged): nothing was kept. */
  read: boolean
}

const CONTROL_BEFORE_RESTORE = 'control.db.before-restore'

/**
 * A copy of the control database about to be replaced, made by SQLite; null when there is none
 * or it cannot be read. The copy is complete once it has its name, and is removed only when
 * its credentials are kept: so a copy already there is from a restore that was interrupted
 * after it replaced control.db, and holds the credentials that run replaced. It is kept, not
 * remade from the backup's control.db now in place (which would bring revoked keys back).
 */
export function copyCurrentControl(dataDir: string, warn?: (message: string) => void): string | null {
  const copy = join(dataDir, CONTROL_BEFORE_RESTORE)
  const current = join(dataDir, 'control.db')
  if (existsSync(copy)) {
    warn?.(
      `an interrupted restore left ${CONTROL_BEFORE_RESTORE}: its credentials (revocations, newer keys and owners) are kept, with those of the control.db in place now`,
    )
    // The control.db in place now may be the real one (the run stopped before replacing it, and
    // keys were revoked since) or the backup's: its credentials join the copy's either way.
    try {
      if (existsSync(current)) mergeCredentials(copy, current)
    } catch (error) {
      warn?.(
        `the control.db in place cannot be read (${error instanceof Error ? error.message : String(error)}): only ${CONTROL_BEFORE_RESTORE}'s credentials are kept`,
      )
    }
    return copy
  }
  if (!existsSync(current)) return null
  const partial = `${copy}.partial`
  for (const suffix of ['', '-wal', '-shm']) rmSync(partial + suffix, { force: true })
  try {
    const db = new Database(current)
    try {
      db.run('PRAGMA busy_timeout = 10000')
      db.run('VACUUM INTO ?', [partial])
    } finally {
      db.close(true)
    }
    // Brought to this version's schema, like the restored copy, so their rows line up column for column.
    openDatabase(partial, { synchronous: 'NORMAL', migrations: controlMigrations }).close(true)
    renameSync(partial, copy)
    return copy
  } catch {
    for (const suffix of ['', '-wal', '-shm']) rmSync(partial + suffix, { force: true })
    return null
  }
}

/**
 * Keys are credentials, not data: after a whole restore, a key revoked since the backup (a
 * leaked one, say) stays revoked, and keys made since keep working. An owner created since the
 * backup is not in it, so its file is left untouched; its row, keys and stored answers are kept
 * with it, rather than leaving a file no owner points to. Everything else in control.db (owners'
 * profiles, stored answers of restored owners) is the backup's.
 */
export function keepCredentials(dataDir: string, previous: string | null): KeptCredentials {
  if (previous === null) return { revokedKeys: 0, newKeys: 0, newOwners: [], read: false }
  try {
    return mergeCredentials(join(dataDir, 'control.db'), previous)
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(previous + suffix, { force: true })
  }
}

/** Sign-in's tables, parents first (CONTRACT §28). */
const SIGN_IN_TABLES = ['owner_logins', 'owner_invites', 'oauth_clients', 'oauth_grants', 'oauth_codes', 'oauth_tokens'] as const

/**
 * Passwords, invitations and apps signed in are credentials too, and are kept whole as they
 * were before the restore: a password changed since stays changed, an app signed out since stays
 * out (its tokens are gone), and none of the backup's is brought back. The replaced control.db
 * of a pfin from before sign-in has none of these tables: then the backup's stand.
 */
function keepSignIn(control: Database): void {
  const present = control
    .query<{ name: string }, []>(`SELECT name FROM previous.sqlite_master WHERE type = 'table' AND name IN (${SIGN_IN_TABLES.map((t) => `'${t}'`).join(', ')})`)
    .all()
  if (present.length !== SIGN_IN_TABLES.length) return
  for (const table of [...SIGN_IN_TABLES].reverse()) control.run(`DELETE FROM main.${table}`)
  const owned = 'owner_id IN (SELECT id FROM main.owners)'
  control.run(`INSERT INTO main.owner_logins ${rowsOf(control, 'previous', 'owner_logins')} WHERE ${owned}`)
  control.run(`INSERT INTO main.owner_invites ${rowsOf(control, 'previous', 'owner_invites')} WHERE ${owned}`)
  control.run(`INSERT INTO main.oauth_clients ${rowsOf(control, 'previous', 'oauth_clients')}`)
  control.run(`INSERT INTO main.oauth_grants ${rowsOf(control, 'previous', 'oauth_grants')} WHERE ${owned}`)
  control.run(`INSERT INTO main.oauth_codes ${rowsOf(control, 'previous', 'oauth_codes')} WHERE ${owned}`)
  control.run(`INSERT INTO main.oauth_tokens ${rowsOf(control, 'previous', 'oauth_tokens')} WHERE grant_id IN (SELECT id FROM main.oauth_grants)`)
}

/**
 * Households' grants (CONTRACT §30) say who may read whose ledger: access, like keys, so they are
 * kept as they were before the restore. A grant revoked since stays revoked, one given since is
 * kept, and one ended by an owner's deletion does not come back. Kept only between owners the
 * restored control.db knows. The replaced control.db of a pfin from before households has no such
 * table: then the backup's stand (it has none either).
 */
function keepGrants(control: Database): void {
  const present = control.query("SELECT 1 FROM previous.sqlite_master WHERE type = 'table' AND name = 'ledger_grants'").get()
  if (present === null) return
  control.run('DELETE FROM main.ledger_grants')
  control.run(
    `INSERT INTO main.ledger_grants ${rowsOf(control, 'previous', 'ledger_grants')}
     WHERE subject_owner_id IN (SELECT id FROM main.owners) AND grantee_owner_id IN (SELECT id FROM main.owners)`,
  )
}

/** Brings `from`'s revocations, and the keys and owners `into` lacks, into the control database `into`. */
function mergeCredentials(into: string, from: string): KeptCredentials {
  const control = openDatabase(into, { synchronous: 'NORMAL', migrations: controlMigrations })
  try {
    control.run('ATTACH DATABASE ? AS previous', [from])
    try {
      return control.transaction(() => {
        const revokedKeys = control.run(
          `UPDATE main.api_keys SET revoked_at = (SELECT p.revoked_at FROM previous.api_keys p WHERE p.id = api_keys.id)
           WHERE revoked_at IS NULL AND id IN (SELECT id FROM previous.api_keys WHERE revoked_at IS NOT NULL)`,
        ).changes
        const newOwners = control
          .query<{ id: string }, []>('SELECT id FROM previous.owners WHERE id NOT IN (SELECT id FROM main.owners) ORDER BY id')
          .all()
          .map((row) => row.id)
        control.run(`INSERT INTO main.owners ${rowsOf(control, 'previous', 'owners')} WHERE id NOT IN (SELECT id FROM main.owners)`)
        const newKeys = control.run(
          `INSERT INTO main.api_keys ${rowsOf(control, 'previous', 'api_keys')}
           WHERE id NOT IN (SELECT id FROM main.api_keys) AND owner_id IN (SELECT id FROM main.owners)`,
        ).changes
        for (const ownerId of newOwners) {
          control.run(`INSERT OR IGNORE INTO main.idempotency_records ${rowsOf(control, 'previous', 'idempotency_records')} WHERE owner_id = ?`, [ownerId])
        }
        keepSignIn(control)
        keepGrants(control)
        return { revokedKeys, newKeys, newOwners, read: true }
      })()
    } finally {
      control.run('DETACH DATABASE previous')
    }
  } finally {
    control.close(true)
  }
}
