import { existsSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { BackupError, backup, MANIFEST, verifyBackup } from '../ops/backup.ts'
import { required, UsageError } from './args.ts'
import type { CommandSpec, GroupSpec } from './spec.ts'

/**
 * `backup --out DIR` and `backup verify DIR` (CONTRACT §18). Progress goes to stderr on a
 * terminal; with --json only the one JSON object is printed.
 */

export function progressFor(json: boolean): (message: string) => void {
  if (json || !process.stderr.isTTY) return () => {}
  return (message) => process.stderr.write(`\r\x1b[K${message}`)
}

export const endProgress = (json: boolean) => {
  if (!json && process.stderr.isTTY) process.stderr.write('\r\x1b[K')
}

/** A backup folder named on the command line: one that is missing, or holds no manifest, is the wrong argument (exit 2). */
export function backupFolder(dir: string, flag: string): string {
  const path = resolve(dir)
  if (!existsSync(path) || !statSync(path).isDirectory()) throw new UsageError(`${flag}: no folder ${path}`)
  if (!existsSync(join(path, MANIFEST))) throw new UsageError(`${flag}: ${path} is not a pfin backup (${MANIFEST} is missing)`)
  return path
}

const take: CommandSpec = {
  name: 'backup',
  summary: 'a consistent, verified copy of control.db and every owner file, with a manifest (safe while the server runs)',
  usage: '--out DIR',
  flags: [{ name: 'out', value: 'DIR', about: 'the new folder for the backup; it must not exist (its parent folders are made)' }],
  example: 'backup --out /srv/backups/pfin-2026-11-23',
  dataDir: 'needs',
  notes: 'Prints (--json): {"out", "owners", "bytes"}. BACKUP_DIR makes the server take one on a schedule.',
  async run(s, { flags }) {
    const out = resolve(required(flags, 'out'))
    s.requireData()
    if (existsSync(out)) throw new UsageError(`--out ${out} already exists; choose a new folder for the backup`)
    const result = await backup(s.dataDir, out, progressFor(s.json))
    endProgress(s.json)
    s.out.result(result, `Backed up ${result.owners} owner(s), ${result.bytes} bytes, to ${result.out}`)
    return 0
  },
}

const verify: CommandSpec = {
  name: 'backup verify',
  summary: "re-check a backup: every file against the manifest's size and SHA-256, and SQLite's integrity_check",
  usage: 'DIR',
  flags: [],
  positionals: ['DIR'],
  example: 'backup verify /srv/backups/pfin-2026-11-23',
  dataDir: 'ignores',
  notes: 'Prints (--json): {"ok": true, "files", "owners", "createdAt", "problems": []}. A damaged backup: its problems on stderr, exit 1.',
  async run(s, { positionals: [dir] }) {
    const path = backupFolder(dir as string, 'backup verify')
    const { manifest, problems } = await verifyBackup(path, progressFor(s.json))
    endProgress(s.json)
    // A backup that does not verify is a failed command: one line on stderr, nothing on stdout.
    if (problems.length > 0) throw new BackupError(`backup ${dir} is damaged (${problems.length} problem(s)): ${problems.join('; ')}`)
    s.out.result(
      { ok: true, files: manifest.files.length, owners: manifest.owners.length, createdAt: manifest.createdAt, problems },
      `Backup ${dir} is whole: ${manifest.files.length} files match the manifest and pass integrity_check.`,
    )
    return 0
  },
}

export const backupGroup: GroupSpec = {
  name: 'backup',
  summary: 'backups of the whole data folder, and their verification',
  commands: [verify],
  fallback: take,
  example: 'backup --out /srv/backups/pfin-2026-11-23',
}
