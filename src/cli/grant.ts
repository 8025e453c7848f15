import type { LedgerGrant } from '../db/control/grant-store.ts'
import { isId, newId } from '../db/ids.ts'
import { GRANTABLE_SCOPES, isScope, NOT_GRANTABLE, type Scope } from '../platform/scopes.ts'
import { type Flags, optional, parseDuration, required, UsageError } from './args.ts'
import { lifeState, listedTime } from './output.ts'
import { ownerExists } from './owner-fields.ts'
import type { Session } from './session.ts'
import type { CommandSpec, GroupSpec } from './spec.ts'

/**
 * Households (CONTRACT §30): grants made, listed and revoked by the operator for the subject's
 * side. A running server honours a revocation or an expiry within a second.
 */

/** `--scopes a,b`: each a scope a grant may carry, once. */
function parseGrantScopes(text: string): Scope[] {
  const scopes = text.split(',').map((s) => s.trim())
  if (scopes.some((s) => s === '')) throw new UsageError(`--scopes has an empty item in "${text}"; separate scopes with single commas`)
  const repeated = scopes.find((s, i) => scopes.indexOf(s) !== i)
  if (repeated) throw new UsageError(`--scopes lists ${repeated} more than once`)
  const unknown = scopes.filter((s) => !isScope(s))
  if (unknown.length) throw new UsageError(`unknown scope ${unknown.join(', ')}; a grant may carry: ${GRANTABLE_SCOPES.join(', ')}`)
  const refused = scopes.filter((s) => NOT_GRANTABLE.includes(s as Scope))
  if (refused.length) throw new UsageError(`a grant never carries ${refused.join(', ')} (a delegated request never manages keys or grants)`)
  return scopes as Scope[]
}

function ownerFlag(s: Session, flags: Flags, name: string): string {
  const id = required(flags, name)
  ownerExists(s, id)
  return id
}

const grantJson = ({ id, subjectOwnerId, granteeOwnerId, scopes, label, createdAt, expiresAt, revokedAt }: LedgerGrant) => ({
  id,
  subjectOwnerId,
  granteeOwnerId,
  scopes,
  label,
  createdAt,
  expiresAt,
  revokedAt,
})

const create: CommandSpec = {
  name: 'grant create',
  summary: "let another owner's keys act on an owner's ledger (households), with the scopes given",
  usage: '--owner ID --to ID --scopes s1,s2 [--label LABEL] [--expires-in 90d]',
  flags: [
    { name: 'owner', value: 'ID', about: 'the subject: the owner whose ledger is shared' },
    { name: 'to', value: 'ID', about: "the grantee: the owner whose keys may act on it (with the header Pfin-Subject: the subject's id)" },
    { name: 'scopes', value: 's1,s2', about: `what the grantee may do, comma-separated, from: ${GRANTABLE_SCOPES.join(', ')}` },
    { name: 'label', value: 'LABEL', about: 'a label for grant list (at most 200 characters)' },
    { name: 'expires-in', value: '90d', about: 'the grant ends after this long: 45s, 90m, 12h, 30d, 2w (default: never)' },
  ],
  example: 'grant create --owner "$OWNER" --to "$PARTNER" --scopes me:read,accounts:read,transactions:read --label partner',
  dataDir: 'needs',
  notes: [
    'Viewer: every *:read scope. Editor: viewer + transactions:write, payees:write, budgets:write, schedules:write.',
    'At most one live grant per (owner, grantee): another is refused (exit 2) until that one is revoked or expires.',
    'Prints (--json): {"grant": {id, subjectOwnerId, granteeOwnerId, scopes, label, createdAt, expiresAt, revokedAt}}.',
  ].join('\n'),
  run(s, { flags }) {
    const subject = ownerFlag(s, flags, 'owner')
    const grantee = ownerFlag(s, flags, 'to')
    if (subject === grantee) throw new UsageError("--to must be another owner: an owner's own keys act on its ledger already")
    const scopes = parseGrantScopes(required(flags, 'scopes'))
    const label = optional(flags, 'label') ?? null
    if (label !== null && label.length > 200) throw new UsageError('--label must be at most 200 characters')
    const expiresIn = optional(flags, 'expires-in')
    const now = Date.now()
    const made = s.control.grants.create({
      id: newId('grt'),
      subjectOwnerId: subject,
      granteeOwnerId: grantee,
      scopes,
      label,
      createdAt: now,
      expiresAt: expiresIn === undefined ? null : now + parseDuration(expiresIn),
      revokedAt: null,
    })
    if (!made.created) {
      throw new UsageError(
        `${grantee} holds a live grant to ${subject}'s ledger already (${made.grant.id}); revoke it first: ${s.invocation.command(`grant revoke ${made.grant.id}`)}`,
      )
    }
    s.out.result(
      { grant: grantJson(made.grant) },
      `Created grant ${made.grant.id}: ${grantee} may act on ${subject}'s ledger with ${scopes.join(', ')}${made.grant.expiresAt ? ` until ${listedTime(made.grant.expiresAt)}` : ''}.\nIts keys send the header Pfin-Subject: ${subject}`,
    )
    return 0
  },
}

const list: CommandSpec = {
  name: 'grant list',
  summary: 'grants, with their state: all, or those an owner gave (--owner) or received (--to)',
  usage: '[--owner ID | --to ID]',
  flags: [
    { name: 'owner', value: 'ID', about: 'the grants this owner gave (its ledger shared)' },
    { name: 'to', value: 'ID', about: 'the grants this owner received' },
  ],
  example: 'grant list --owner "$OWNER"',
  dataDir: 'needs',
  notes:
    'Lists revoked and expired grants too. Prints (--json): {"grants": [{id, subjectOwnerId, granteeOwnerId, scopes, label, createdAt, expiresAt, revokedAt}]}.',
  run(s, { flags }) {
    if (flags.owner !== undefined && flags.to !== undefined) throw new UsageError('use either --owner or --to, not both')
    const subject = flags.owner !== undefined ? ownerFlag(s, flags, 'owner') : undefined
    const grantee = flags.to !== undefined ? ownerFlag(s, flags, 'to') : undefined
    const now = Date.now()
    const grants = s.control.grants.list({ subject, grantee }, true, now)
    const lines = grants.map(
      (g) =>
        `${g.id}  ${lifeState(g, now)}  ${g.subjectOwnerId} → ${g.granteeOwnerId}  ${g.label ?? '-'}  created ${listedTime(g.createdAt)}  expires ${listedTime(g.expiresAt)}  [${(g.scopes as string[]).join(',')}]`,
    )
    s.out.result({ grants: grants.map(grantJson) }, grants.length ? lines.join('\n') : 'No grants.')
    return 0
  },
}

const revoke: CommandSpec = {
  name: 'grant revoke',
  summary: 'end a grant at once (a running server refuses its requests within a second)',
  usage: 'GRANT_ID',
  flags: [],
  positionals: ['GRANT_ID'],
  example: 'grant revoke grt_0193…',
  dataDir: 'needs',
  notes: 'Prints (--json): {"id", "revoked": true}. Revoking a revoked grant keeps its first revocation time.',
  run(s, { positionals: [grantId] }) {
    const id = grantId as string
    if (!isId('grt', id) || !s.control.grants.find(id)) throw new UsageError(`no grant with id "${id}"`)
    s.control.grants.revoke(id, Date.now())
    s.out.result({ id, revoked: true }, `Revoked ${id}; the grantee's requests stop within a second.`)
    return 0
  },
}

export const grantGroup: GroupSpec = {
  name: 'grant',
  summary: "households: grants that let one owner's keys act on another owner's ledger",
  commands: [create, list, revoke],
  example: 'grant list --owner "$OWNER"',
}
