import { readManifest } from '../ops/backup.ts'
import { planRestore, type RestoreResult, restore } from '../ops/restore.ts'
import type { RestorePlan } from '../ops/restore-plan.ts'
import { optional, required, UsageError } from './args.ts'
import { backupFolder, endProgress, progressFor } from './backup.ts'
import { shellQuote } from './invocation.ts'
import type { CommandSpec } from './spec.ts'

/**
 * `restore --from DIR [--owner ID] [--yes]` (CONTRACT §18). Without --yes it only says what it
 * would replace and changes nothing; with --yes it restores and keeps what it replaced.
 */

const iso = (ms: number) => new Date(ms).toISOString()

const named = (ownerId: string | null, name: string | null) => (ownerId === null ? 'control.db' : `${ownerId}${name ? ` (${name})` : ''}`)

/** One line per file the restore replaces (or adds), and the owners it leaves alone. */
function describe(plan: RestorePlan, done: boolean): string[] {
  const lines = [`${done ? 'Restored' : 'Restoring'} ${plan.from} (taken ${iso(plan.backupCreatedAt)}) ${done ? 'in place of' : 'would replace'}:`]
  for (const file of plan.replacing) {
    let what: string
    if (!file.exists) what = `${done ? 'was' : 'is'} not in the data folder: added as in the backup`
    else if (file.unreadable !== null) what = `cannot be read (${file.unreadable}): what it held cannot be told`
    else {
      const written = file.lastWriteAt === null ? 'never written' : `last written ${iso(file.lastWriteAt)}`
      const after = file.lastWriteAt !== null && file.lastWriteAt > plan.backupCreatedAt ? ' (after the backup)' : ''
      what =
        file.ownerId === null
          ? `${written}${after}; owners and stored answers go back to the backup's, keys keep their revocations and newer keys stay`
          : `${written}${after}; ${file.lostTransactions ? `${file.lostTransactions} transaction(s) not in the backup ${done ? 'were' : 'would be'} lost` : 'no transaction lost'}`
    }
    lines.push(`  ${named(file.ownerId, file.name)}: ${what}`)
  }
  if (plan.untouched.length > 0)
    lines.push(`Left as they are (created since the backup): ${plan.untouched.map((owner) => named(owner.ownerId, owner.name)).join(', ')}`)
  return lines
}

export const restoreSpec: CommandSpec = {
  name: 'restore',
  summary: 'put a backup back, whole or one owner, with the server stopped; without --yes only shows what it would replace',
  usage: '--from DIR [--owner ID] [--yes]',
  flags: [
    { name: 'from', value: 'DIR', about: 'the backup folder (made by backup --out); it is verified first' },
    { name: 'owner', value: 'ID', about: "restore only this owner's file (control.db and the other owners stay)" },
    { name: 'yes', about: 'really restore (without it: show the plan, change nothing, exit 2)' },
  ],
  example: 'restore --from /srv/backups/pfin-2026-11-23 --yes',
  dataDir: 'creates',
  notes: [
    'The plan names each file it replaces: its last write and, for an owner, how many of its transactions the',
    'backup lacks (they would be lost). With --yes the replaced databases are first kept in',
    'DATA_DIR/replaced-<UTC time>/ (readable ones copied by SQLite, damaged ones moved with their -wal/-shm); remove',
    'that folder when you no longer need it. Keys revoked since the backup stay revoked; keys and owners made since stay.',
    'Sync clients must resync afterwards (their change-feed cursors answer 410).',
    'Prints (--json) one object: the plan {"restored": false, "from", "backupCreatedAt", "control", "owners", "replacing",',
    '"untouched"}, or with --yes the same with "restored": true, "replacedDir", "forgottenAnswers", "kept".',
  ].join('\n'),
  async run(s, { flags }) {
    const from = backupFolder(required(flags, 'from'), '--from')
    const ownerId = optional(flags, 'owner')
    // The owner is looked for first: a wrong id is a usage error, before any verifying.
    if (ownerId !== undefined && !(await readManifest(from)).owners.includes(ownerId))
      throw new UsageError(`owner ${ownerId} is not in the backup ${from} (its owners are listed in its manifest.json)`)
    if (flags.yes !== true) {
      const plan = await planRestore(s.dataDir, from, { ownerId, progress: progressFor(s.json) })
      endProgress(s.json)
      const where = `${s.dataDir}/replaced-<UTC time>/`
      s.out.result(
        { restored: false, ...plan },
        [...describe(plan, false), `With --yes, the files it replaces are kept in ${where} until you remove them.`].join('\n'),
      )
      const again = `restore --from ${shellQuote(from)}${ownerId === undefined ? '' : ` --owner ${ownerId}`} --yes`
      process.stderr.write(`pfin: nothing was restored; to restore, stop the server, then: ${s.invocation.command(again)}\n`)
      return 2
    }
    const warn = (message: string) => process.stderr.write(`warning: ${message}\n`)
    const result: RestoreResult = await restore(s.dataDir, from, { ownerId, progress: progressFor(s.json), warn })
    endProgress(s.json)
    const kept = result.kept
    const credentials = !kept
      ? ''
      : kept.read
        ? `Kept from the replaced control.db: ${kept.revokedKeys} revocation(s) and ${kept.newKeys} key(s) made since the backup, and ${kept.newOwners.length} owner(s) created since (${kept.newOwners.join(', ') || 'none'}), whose files were left as they are.`
        : 'The replaced control.db could not be read: revoke again any key revoked since the backup.'
    const lines = [
      ...describe(result, true),
      `Restored ${result.control ? 'control.db and ' : ''}${result.owners.length} owner file(s). Sync clients must resync (their change-feed cursors now answer 410).`,
    ]
    if (credentials) lines.push(credentials)
    if (result.replacedDir !== null)
      lines.push(
        `The files it replaced are kept in ${result.replacedDir}/; remove that folder once you no longer need them (rm -r ${shellQuote(result.replacedDir)}).`,
      )
    s.out.result({ restored: true, ...result }, lines.join('\n'))
    return 0
  },
}
