import { resolve } from 'node:path'
import { readDirectory } from '../platform/cluster.ts'
import { type ClusterSpec, ClusterUsageError, directoryHolder, failover, move, oldKeys, place, readClusterSpec } from '../ops/cluster.ts'
import { type Flags, optional, required, UsageError } from './args.ts'
import { listedTime } from './output.ts'
import type { CommandSpec, FlagSpec, GroupSpec } from './spec.ts'

/**
 * `pfin cluster …` (CONTRACT §31): the admin tool of a cluster, and the only writer of its
 * directory and of the router's map. Nothing of it is needed for a single server.
 */

const CLUSTER_FLAG: FlagSpec = { name: 'cluster', value: 'FILE', about: 'the cluster file: nodes, directory, HAProxy socket and map (default: CLUSTER_FILE)' }

function spec(flags: Flags): ClusterSpec {
  const path = optional(flags, 'cluster') ?? process.env.CLUSTER_FILE?.trim()
  if (!path) throw new UsageError('--cluster FILE (or CLUSTER_FILE) is required: the cluster file (see docs/operations.md, "Running a cluster")')
  return readClusterSpec(resolve(path))
}

/** A wrong argument or cluster file, found before anything was changed, is a usage error (exit code 2). */
async function usage(work: () => number | Promise<number>): Promise<number> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof ClusterUsageError) throw new UsageError(error.message)
    throw error
  }
}

/** What a move or failover says while it runs: on stderr, so --json output stays one object. */
const progressOnStderr = (message: string) => console.error(`pfin: ${message}`)

const REISSUE =
  "Keys made before pfin could run as a cluster (pfk_key_…) name no owner, so the router cannot send them to their node: `pfin cluster old-keys` lists them; replace each with `pfin key rotate KEY_ID` over its node's data folder (the new key is pfk_own_…, same owner, name and scopes)."

const placeCommand: CommandSpec = {
  name: 'cluster place',
  summary: "put an owner made on a node (pfin owner create over that node's data folder) in the directory and the router",
  usage: 'OWNER_ID --on NODE --cluster FILE',
  flags: [{ name: 'on', value: 'NODE', about: 'the node that holds the owner' }, CLUSTER_FLAG],
  positionals: ['OWNER_ID'],
  example: 'cluster place own_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b --on node-a --cluster /etc/pfin/cluster.json',
  dataDir: 'ignores',
  notes: `Prints (--json): {"owner", "node", "epoch", "note"}. ${REISSUE}`,
  run(s, { flags, positionals: [owner] }) {
    return usage(async () => {
      const result = await place(spec(flags), owner as string, required(flags, 'on'))
      s.out.result({ ...result, note: REISSUE }, `Placed ${result.owner} on ${result.node} (epoch ${result.epoch}). ${REISSUE}`)
      return 0
    })
  },
}

const moveCommand: CommandSpec = {
  name: 'cluster move',
  summary: 'move an owner to another node: freeze, copy (VACUUM INTO) with its keys and answers, verify, flip the router, unfreeze',
  usage: 'OWNER_ID --to NODE --cluster FILE [--keep-source]',
  flags: [
    { name: 'to', value: 'NODE', about: 'the node to move the owner to' },
    CLUSTER_FLAG,
    { name: 'keep-source', about: "leave the source node's old copy where it is (by default it goes to that node's moved/ folder)" },
  ],
  positionals: ['OWNER_ID'],
  example: 'cluster move own_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b --to node-b --cluster /etc/pfin/cluster.json',
  dataDir: 'ignores',
  notes:
    'Prints (--json): {"owner", "from", "to", "epoch", "frozenMs", "phases": {"freezeMs", "copyMs", "checkMs", "controlMs", "flipMs"}, "mark", "source"}. While frozen, its requests answer 503 owner_moving with Retry-After: 1. After the flip the source\'s old copy is renamed to <its DATA_DIR>/moved/<owner>.epoch<N>.db ("source"; null: left in place); the source keeps refusing the owner (421).',
  run(s, { flags, positionals: [owner] }) {
    return usage(async () => {
      const result = await move(spec(flags), owner as string, required(flags, 'to'), progressOnStderr, {
        keepSource: flags['keep-source'] === true,
      })
      const p = result.phases
      s.out.result(
        result,
        `Moved ${result.owner} from ${result.from} to ${result.to} (epoch ${result.epoch}); frozen ${result.frozenMs} ms (freeze ${p.freezeMs}, copy ${p.copyMs}, check ${p.checkMs}, control rows ${p.controlMs}, flip ${p.flipMs}); old copy ${result.source ?? 'left in place'}`,
      )
      return 0
    })
  },
}

const failoverCommand: CommandSpec = {
  name: 'cluster failover',
  summary: 'after a node is lost: restore its owners from its Litestream replica onto live nodes, new epochs, flip the router',
  usage: 'NODE --cluster FILE',
  flags: [CLUSTER_FLAG],
  positionals: ['NODE'],
  example: 'cluster failover node-c --cluster /etc/pfin/cluster.json',
  dataDir: 'ignores',
  notes:
    'Prints (--json): {"node", "owners": [{"owner", "to", "epoch"}]}. Writes acknowledged within the replication interval before the loss may be gone; feed cursors of these owners answer 410.',
  run(s, { flags, positionals: [node] }) {
    return usage(async () => {
      const result = await failover(spec(flags), node as string, progressOnStderr)
      s.out.result(
        result,
        `Node ${result.node}: ${result.owners.length} owner(s) restored onto ${[...new Set(result.owners.map((o) => o.to))].join(', ') || 'no node'}`,
      )
      return 0
    })
  },
}

const statusCommand: CommandSpec = {
  name: 'cluster status',
  summary: 'the directory: each owner, its node and epoch, and lost nodes',
  usage: '--cluster FILE',
  flags: [CLUSTER_FLAG],
  example: 'cluster status --cluster /etc/pfin/cluster.json',
  dataDir: 'ignores',
  notes:
    'Prints (--json): the directory {"version", "owners": {ownerId: {"node", "epoch", "frozen"}}, "lost"}, "oldKeys", the number of live keys in the old form (pfin cluster old-keys), and "command", the place, move or failover changing the directory ({"pid", "host", "command", "since", "running"}; running false: it was killed, and the owners it froze stay frozen until it is run again), or null.',
  run(s, { flags }) {
    return usage(async () => {
      const cluster = spec(flags)
      const directory = readDirectory(cluster.directory)
      const lines = Object.entries(directory.owners).map(([owner, p]) => `${owner}  ${p.node}  epoch ${p.epoch}${p.frozen ? '  frozen' : ''}`)
      const holder = directoryHolder(cluster)
      if (holder?.running) lines.push(`Under way: pfin cluster ${holder.command} (pid ${holder.pid} on ${holder.host})`)
      else if (holder) lines.push(`Did not finish (its process is gone): pfin cluster ${holder.command} (pid ${holder.pid} on ${holder.host})`)
      if (!holder?.running && Object.values(directory.owners).some((p) => p.frozen))
        lines.push(
          'Owners frozen with no command under way answer 503 until moved: run the move again (pfin cluster move OWNER --to NODE), or unfreeze one where it is (pfin cluster place OWNER --on NODE)',
        )
      const old = oldKeys(cluster).keys.length
      if (old > 0) lines.push(`${old} live key(s) in the old form (no owner in them; the router cannot place them): pfin cluster old-keys`)
      s.out.result({ ...directory, oldKeys: old, command: holder }, lines.join('\n') || 'No owner placed yet.')
      return 0
    })
  },
}

const oldKeysCommand: CommandSpec = {
  name: 'cluster old-keys',
  summary: 'list the live keys of every node still in the old form (pfk_key_…, no owner in them): the router cannot place them',
  usage: '--cluster FILE',
  flags: [CLUSTER_FLAG],
  example: 'cluster old-keys --cluster /etc/pfin/cluster.json',
  dataDir: 'ignores',
  notes:
    'Prints (--json): {"keys": [{node, owner, ownerName, id, name, scopes, createdAt, lastUsedAt, expiresAt, replacedBy}], "unreadable": [{node, reason}], "reissue"} (never a secret). Reissue each with `pfin key rotate KEY_ID --data-dir <its node\'s DATA_DIR>` (or `pfin key create --owner OWNER --scopes …` and then `pfin key revoke KEY_ID`), and give the new key to whoever used the old one. Keys made before this version are listed even if their text already names the owner (pfk_own_…): those may stay.',
  run(s, { flags }) {
    return usage(async () => {
      const { keys, unreadable } = oldKeys(spec(flags))
      const reissue = "pfin key rotate KEY_ID --data-dir <the node's DATA_DIR>"
      const keyLines = keys.map(
        (k) =>
          `${k.node}  ${k.owner} (${k.ownerName})  ${k.id}  ${k.name ?? '-'}  created ${listedTime(k.createdAt)}  last used ${listedTime(k.lastUsedAt)}  [${k.scopes.join(',')}]${k.replacedBy ? `  replaced by ${k.replacedBy}` : ''}`,
      )
      const unreadLines = unreadable.map((u) => `${u.node}: control.db not read (${u.reason})`)
      const lines = keys.length === 0 ? ['No key in the old form.', ...unreadLines] : [...keyLines, ...unreadLines, `Reissue each: ${reissue}`]
      s.out.result({ keys, unreadable, reissue }, lines.join('\n'))
      return 0
    })
  },
}

export const clusterGroup: GroupSpec = {
  name: 'cluster',
  summary: 'run owners over several nodes behind HAProxy (CONTRACT §31)',
  commands: [placeCommand, moveCommand, failoverCommand, statusCommand, oldKeysCommand],
  example: 'cluster status --cluster /etc/pfin/cluster.json',
}
