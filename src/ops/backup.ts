import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import packageJson from '../../package.json' with { type: 'json' }
import { isId } from '../db/ids.ts'
import { copyDatabase, holdsNoDatabase } from '../db/sqlite.ts'

/**
 * Backups of a whole DATA_DIR (CONTRACT §18): a consistent copy of every database made through
 * SQLite (`VACUUM INTO`, safe while the server writes), each checked with `integrity_check`,
 * and a manifest with sizes and SHA-256 sums. A backup is written under a temporary name and
 * renamed into place when complete, so a crash never leaves a half backup that looks whole.
 *
 * control.db is copied first, then the owners it lists: every answer the control copy
 * remembers was committed before any owner file was copied, so a restore can never tell a retry
 * "done" for a write the restored owner file lacks (a later write is in the owner file's own
 * record). Each listed owner's file must be there and hold a database, or the backup fails
 * (it would restore that owner as an empty ledger); an owner deleted while the backup runs is
 * left out of the control copy too.
 */

export const MANIFEST = 'manifest.json'
export const FORMAT = 'pfin-backup/1'

export interface ManifestFile {
  /** Relative to the backup folder: `control.db` or `tenants/<ownerId>.db`. */
  path: string
  bytes: number
  sha256: string
  ownerId: string | null
  /** When the copy was taken (epoch ms): newer idempotency records are dropped on restore. */
  copiedAt: number
}

export interface Manifest {
  format: typeof FORMAT
  pfinVersion: string
  createdAt: number
  owners: string[]
  files: ManifestFile[]
}

/** A backup, a manifest or a restore cannot go ahead; the message says why. */
export class BackupError extends Error {}

type Progress = (message: string) => void

const sha256 = async (path: string) => new Bun.CryptoHasher('sha256').update(await Bun.file(path).arrayBuffer()).digest('hex')

/** `PRAGMA integrity_check` through a read-only connection: the whole file, not just a quick look. */
export function integrityProblems(path: string): string[] {
  let db: Database | undefined
  try {
    db = new Database(path, { readonly: true })
    const rows = db.query<{ integrity_check: string }, []>('PRAGMA integrity_check').all()
    return rows.length === 1 && rows[0]?.integrity_check === 'ok' ? [] : rows.slice(0, 5).map((row) => row.integrity_check)
  } catch (error) {
    return [error instanceof Error ? error.message : String(error)]
  } finally {
    db?.close(true)
  }
}

function checkCopy(copy: string, path: string): void {
  const problems = integrityProblems(copy)
  if (problems.length > 0) throw new BackupError(`the copy of ${path} fails integrity_check: ${problems.join('; ')}`)
}

/** The owner ids a control database lists. */
function ownersIn(control: string): string[] {
  const db = new Database(control, { readonly: true })
  try {
    return db
      .query<{ id: string }, []>('SELECT id FROM owners ORDER BY id')
      .all()
      .map((row) => row.id)
  } finally {
    db.close(true)
  }
}

/** Whether the live control database still lists the owner (it was not deleted meanwhile). */
function ownerExists(dataDir: string, ownerId: string): boolean {
  const db = new Database(join(dataDir, 'control.db'), { readonly: true })
  try {
    db.run('PRAGMA busy_timeout = 10000')
    return db.query('SELECT 1 FROM owners WHERE id = ?').get(ownerId) !== null
  } finally {
    db.close(true)
  }
}

/** Removes owners (deleted while the backup ran) from the backup's control copy, with their keys and stored answers. */
function forgetOwners(control: string, ownerIds: string[]): void {
  const db = new Database(control)
  try {
    db.transaction(() => {
      for (const id of ownerIds) {
        db.run('DELETE FROM idempotency_records WHERE owner_id = ?', [id])
        db.run('DELETE FROM api_keys WHERE owner_id = ?', [id])
        // Sign-in (CONTRACT §28), where this control.db has it.
        if (db.query("SELECT 1 FROM sqlite_master WHERE name = 'oauth_tokens'").get() !== null) {
          db.run('DELETE FROM oauth_tokens WHERE grant_id IN (SELECT id FROM oauth_grants WHERE owner_id = ?)', [id])
          for (const table of ['oauth_codes', 'oauth_grants', 'owner_invites', 'owner_logins']) db.run(`DELETE FROM ${table} WHERE owner_id = ?`, [id])
        }
        db.run('DELETE FROM owners WHERE id = ?', [id])
      }
    })()
  } finally {
    db.close(true)
  }
}

/**
 * An owner's file copied as `copyDatabase` does; null when copied, else what is wrong with the
 * file: missing, or holding no database (a file emptied to zero bytes copies as an empty
 * database, which must not pass for that owner's ledger).
 */
function copyOwnerFile(source: string, target: string): string | null {
  if (!existsSync(source)) return 'is missing'
  try {
    copyDatabase(source, target)
  } catch (error) {
    if (!existsSync(source)) return 'is missing'
    throw error
  }
  const db = new Database(target, { readonly: true })
  try {
    return holdsNoDatabase(db) ? 'holds no database (it is empty)' : null
  } finally {
    db.close(true)
  }
}

/** Takes a backup of `dataDir` into `out`, which must not exist yet. */
export async function backup(dataDir: string, out: string, progress: Progress = () => {}): Promise<{ out: string; owners: number; bytes: number }> {
  const target = resolve(out)
  if (existsSync(target)) throw new BackupError(`${target} already exists; choose a new folder for the backup`)
  if (!existsSync(join(dataDir, 'control.db'))) throw new BackupError(`no pfin data in ${dataDir} (DATA_DIR): control.db is missing`)
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 })
  const partial = join(dirname(target), `.${basename(target)}.partial-${process.pid}`)
  rmSync(partial, { recursive: true, force: true })
  mkdirSync(join(partial, 'tenants'), { recursive: true, mode: 0o700 })
  try {
    const createdAt = Date.now()
    const control = join(partial, 'control.db')
    progress('copying control.db')
    copyDatabase(join(dataDir, 'control.db'), control)
    // The owners are those of the control copy: every one of them needs its file, and a file
    // no owner names is not part of the data.
    const listed = ownersIn(control)
    const owners: string[] = []
    const gone: string[] = []
    const files: ManifestFile[] = []
    for (const [index, ownerId] of listed.entries()) {
      const path = `tenants/${ownerId}.db`
      progress(`copying ${path} (${index + 1}/${listed.length})`)
      const copiedAt = Date.now()
      const copy = join(partial, path)
      const problem = copyOwnerFile(join(dataDir, path), copy)
      if (problem !== null) {
        // Deleted (owner delete) since control.db was copied: left out of the copy as well.
        if (!ownerExists(dataDir, ownerId)) {
          rmSync(copy, { force: true })
          gone.push(ownerId)
          continue
        }
        throw new BackupError(`the owner file ${path} ${problem}; restore it (or that owner) first`)
      }
      checkCopy(copy, path)
      owners.push(ownerId)
      files.push({ path, bytes: statSync(copy).size, sha256: await sha256(copy), ownerId, copiedAt })
    }
    if (gone.length > 0) forgetOwners(control, gone)
    checkCopy(control, 'control.db')
    // Copied first, as the backup began.
    files.unshift({ path: 'control.db', bytes: statSync(control).size, sha256: await sha256(control), ownerId: null, copiedAt: createdAt })
    const manifest: Manifest = { format: FORMAT, pfinVersion: packageJson.version, createdAt, owners, files }
    await Bun.write(join(partial, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`)
    renameSync(partial, target)
    return { out: target, owners: owners.length, bytes: files.reduce((sum, file) => sum + file.bytes, 0) }
  } catch (error) {
    rmSync(partial, { recursive: true, force: true })
    throw error
  }
}

export async function readManifest(dir: string): Promise<Manifest> {
  const path = join(resolve(dir), MANIFEST)
  if (!existsSync(path)) throw new BackupError(`${dir} is not a pfin backup: ${MANIFEST} is missing`)
  let manifest: Manifest
  try {
    manifest = JSON.parse(await Bun.file(path).text()) as Manifest
  } catch {
    throw new BackupError(`${path} is not valid JSON`)
  }
  if (manifest.format !== FORMAT || !Array.isArray(manifest.files)) throw new BackupError(`${path} is not a ${FORMAT} manifest`)
  for (const file of manifest.files) {
    const ownerOk = file.ownerId === null ? file.path === 'control.db' : isId('own', file.ownerId) && file.path === `tenants/${file.ownerId}.db`
    if (!ownerOk) throw new BackupError(`${path} lists an unexpected file ${JSON.stringify(file.path)}`)
  }
  return manifest
}

/** Every file against the manifest (present, size, SHA-256) and SQLite's integrity check. */
export async function verifyBackup(dir: string, progress: Progress = () => {}): Promise<{ manifest: Manifest; problems: string[] }> {
  const manifest = await readManifest(dir)
  const problems: string[] = []
  for (const [index, file] of manifest.files.entries()) {
    progress(`checking ${file.path} (${index + 1}/${manifest.files.length})`)
    const path = join(resolve(dir), file.path)
    if (!existsSync(path)) {
      problems.push(`${file.path}: missing`)
      continue
    }
    if (statSync(path).size !== file.bytes) problems.push(`${file.path}: ${statSync(path).size} bytes, the manifest says ${file.bytes}`)
    else if ((await sha256(path)) !== file.sha256) problems.push(`${file.path}: SHA-256 differs from the manifest`)
    else problems.push(...integrityProblems(path).map((problem) => `${file.path}: ${problem}`))
  }
  if (!manifest.files.some((file) => file.path === 'control.db')) problems.push('control.db: not in the manifest')
  return { manifest, problems }
}
