import { BackupError, backup, verifyBackup } from '../ops/backup.ts'
import { restore } from '../ops/restore.ts'
import { type Flags, optional, parseFlags, required, UsageError } from './args.ts'
import type { Output } from './output.ts'

/**
 * `backup --out DIR`, `backup verify DIR`, `restore --from DIR [--owner ID]` (CONTRACT §18).
 * Progress goes to stderr on a terminal; with --json only the one JSON object is printed.
 */

export interface OpsContext {
  dataDir: string
  out: Output
  json: boolean
}

function progressFor(json: boolean): (message: string) => void {
  if (json || !process.stderr.isTTY) return () => {}
  return (message) => process.stderr.write(`\r\x1b[K${message}`)
}

const endProgress = (json: boolean) => {
  if (!json && process.stderr.isTTY) process.stderr.write('\r\x1b[K')
}

export async function backupCommand(ctx: OpsContext, args: string[]): Promise<number> {
  if (args[0] === 'verify') {
    const { positionals } = parseFlags(args.slice(1), [])
    const [dir, ...extra] = positionals
    if (!dir || extra.length) throw new UsageError('usage: backup verify DIR')
    const { manifest, problems } = await verifyBackup(dir, progressFor(ctx.json))
    endProgress(ctx.json)
    // A backup that does not verify is a failed command: one line on stderr, nothing on stdout.
    if (problems.length > 0) throw new BackupError(`backup ${dir} is damaged (${problems.length} problem(s)): ${problems.join('; ')}`)
    ctx.out.result(
      { ok: true, files: manifest.files.length, owners: manifest.owners.length, createdAt: manifest.createdAt, problems },
      `Backup ${dir} is whole: ${manifest.files.length} files match the manifest and pass integrity_check.`,
    )
    return 0
  }
  const { flags } = parseFlags(args, ['out'])
  const result = await backup(ctx.dataDir, required(flags, 'out'), progressFor(ctx.json))
  endProgress(ctx.json)
  ctx.out.result(result, `Backed up ${result.owners} owner(s), ${result.bytes} bytes, to ${result.out}`)
  return 0
}

export async function restoreCommand(ctx: OpsContext, args: string[]): Promise<number> {
  const { flags } = parseFlags(args, ['from', 'owner'])
  const ownerId = optional(flags as Flags, 'owner')
  const warn = (message: string) => process.stderr.write(`warning: ${message}\n`)
  const result = await restore(ctx.dataDir, required(flags, 'from'), { ownerId, progress: progressFor(ctx.json), warn })
  endProgress(ctx.json)
  const kept = result.kept
  const credentials = !kept
    ? ''
    : kept.read
      ? ` Kept from the replaced control.db: ${kept.revokedKeys} revocation(s) and ${kept.newKeys} key(s) made since the backup, and ${kept.newOwners.length} owner(s) created since (${kept.newOwners.join(', ') || 'none'}), whose files were left as they are.`
      : ' The replaced control.db could not be read: revoke again any key revoked since the backup.'
  ctx.out.result(
    result,
    `Restored ${result.control ? 'control.db and ' : ''}${result.owners.length} owner file(s) from ${result.from}. ` +
      `Sync clients must resync (their change-feed cursors now answer 410).${credentials}`,
  )
  return 0
}
