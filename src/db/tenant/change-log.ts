import { changeLog } from './schema.ts'
import type { Tenant } from './tenant.ts'

/**
 * The owner's change feed as stored (CONTRACT §15): `change_log` holds one row per entity at
 * its latest change, written by triggers in the same transaction as the change; `feed_state`
 * holds the epoch, the secret that signs cursors and how far tombstones have been purged.
 * The writes of every module reach the feed through these triggers and the few functions here,
 * so no module depends on the changes module that serves the feed.
 */

/** The kinds of entity the feed records, in their singular names. */
export type ChangeResource = (typeof changeLog.$inferSelect)['resource']

export interface ChangeRow {
  seq: number
  resource: ChangeResource
  entityId: string
  op: 'upsert' | 'delete'
  changedAt: number
  externalId: string | null
}

type RawChange = {
  seq: bigint | number
  resource: ChangeResource
  entity_id: string
  op: 'upsert' | 'delete'
  changed_at: bigint | number
  external_id: string | null
}
export type FeedState = { epoch: string; secret: string; purgedSeq: number }

const COLUMNS = 'seq, resource, entity_id, op, changed_at, external_id'

const toChange = (row: RawChange): ChangeRow => ({
  seq: Number(row.seq),
  resource: row.resource,
  entityId: row.entity_id,
  op: row.op,
  changedAt: Number(row.changed_at),
  externalId: row.external_id,
})

export function feedState(tenant: Tenant): FeedState {
  const row = tenant.sqlite
    .query<{ epoch: string; secret: string; purged_seq: bigint | number }, []>('SELECT epoch, secret, purged_seq FROM feed_state WHERE id = 1')
    .get()
  if (!row) throw new Error('feed_state is missing: the owner file was not migrated')
  return { epoch: row.epoch, secret: row.secret, purgedSeq: Number(row.purged_seq) }
}

/** The seq of the newest change ever made (0 for none): where a reader that has seen everything stands. */
export function lastSeq(tenant: Tenant): number {
  const row = tenant.sqlite.query<{ seq: bigint | number }, []>("SELECT seq FROM sqlite_sequence WHERE name = 'change_log'").get()
  return Number(row?.seq ?? 0)
}

/**
 * Every kind of entity the feed records, from the table's own list: asking for all of them walks
 * the feed itself. A hand-kept count fell behind once (6 while the feed had 8 kinds), and a key
 * that may read exactly that many kinds would have been given every kind's changes.
 */
const EVERY_KIND: readonly ChangeResource[] = changeLog.resource.enumValues

/**
 * Up to `limit` changes after `after`, in seq order, of the given kinds. One kind (or a few)
 * walks the (resource, seq) index of each and merges, so a filtered page costs the same
 * however many changes of other kinds there are.
 */
export function changesAfter(tenant: Tenant, after: number, limit: number, kinds: readonly ChangeResource[]): ChangeRow[] {
  if (EVERY_KIND.every((kind) => kinds.includes(kind))) {
    return tenant.sqlite
      .query<RawChange, [number, number]>(`SELECT ${COLUMNS} FROM change_log WHERE seq > ? ORDER BY seq LIMIT ?`)
      .all(after, limit)
      .map(toChange)
  }
  const byKind = tenant.sqlite.query<RawChange, [string, number, number]>(
    `SELECT ${COLUMNS} FROM change_log WHERE resource = ? AND seq > ? ORDER BY seq LIMIT ?`,
  )
  return kinds
    .flatMap((kind) => byKind.all(kind, after, limit).map(toChange))
    .sort((a, b) => a.seq - b.seq)
    .slice(0, limit)
}

/**
 * Records a change of entities whose own rows did not change but whose objects did: a
 * category's `depth` and `fullName` follow its ancestors' names and places.
 */
export function recordCategoryChanges(tenant: Tenant, ids: readonly string[]): void {
  const touch = tenant.sqlite.query<unknown, [string]>(
    "INSERT OR REPLACE INTO change_log (resource, entity_id, op, changed_at, external_id) SELECT 'category', id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), external_id FROM categories WHERE id = ? AND is_system = 0",
  )
  for (const id of ids) touch.run(id)
}

/** The tables whose rows carry `updatedAt` (CONTRACT §25). */
export type UpdatedTable = 'accounts' | 'categories' | 'payees' | 'tags' | 'rules' | 'transactions' | 'import_presets' | 'schedules'

/**
 * Ends the write that created `id`: everything that write did to it (its legs, its tags) is its
 * creation, so its `updatedAt` is its `createdAt`, as a client that shows "edited" expects. The
 * feed's trigger (migration 0010) had moved it to the time of each of those steps.
 */
export function settleCreated(tenant: Tenant, table: UpdatedTable, id: string): void {
  tenant.sqlite.query<unknown, [string]>(`UPDATE ${table} SET updated_at = created_at WHERE id = ? AND updated_at <> created_at`).run(id)
}

/** The seq of an entity's latest change ('0' when it has none): changes whenever the entity does. */
export function entityVersion(tenant: Tenant, resource: ChangeResource, id: string): string {
  const row = tenant.sqlite
    .query<{ seq: bigint | number }, [string, string]>('SELECT seq FROM change_log WHERE resource = ? AND entity_id = ?')
    .get(resource, id)
  return String(row?.seq ?? 0)
}

/** Whether a transaction with this externalId was deleted and its tombstone is still kept. */
export function hasTransactionTombstone(tenant: Tenant, externalId: string): boolean {
  return (
    tenant.sqlite
      .query<{ one: number }, [string]>("SELECT 1 AS one FROM change_log WHERE resource = 'transaction' AND op = 'delete' AND external_id = ? LIMIT 1")
      .get(externalId) !== null
  )
}

/**
 * Drops tombstones older than the retention. Cursors from before the newest dropped one
 * could miss a deletion, so they expire (410). Runs only when there is something to drop.
 */
export function purgeTombstones(tenant: Tenant, cutoff: number): void {
  const oldest = tenant.sqlite.query<{ at: bigint | number | null }, []>("SELECT min(changed_at) AS at FROM change_log WHERE op = 'delete'").get()
  if (oldest?.at == null || Number(oldest.at) >= cutoff) return
  tenant.write(() => {
    const purged = tenant.sqlite
      .query<{ seq: bigint | number | null }, [number]>("SELECT max(seq) AS seq FROM change_log WHERE op = 'delete' AND changed_at < ?")
      .get(cutoff)
    if (purged?.seq == null) return
    tenant.sqlite.query("DELETE FROM change_log WHERE op = 'delete' AND changed_at < ?").run(cutoff)
    tenant.sqlite.query('UPDATE feed_state SET purged_seq = max(purged_seq, ?) WHERE id = 1').run(purged.seq)
  })
}

/** Starts a new epoch (after a restore): every cursor handed out before it expires. */
export function renewEpoch(tenant: Tenant): void {
  tenant.sqlite.query('UPDATE feed_state SET epoch = lower(hex(randomblob(8))) WHERE id = 1').run()
}

/** Records a change of a schedule whose own row did not change: one of its occurrences was skipped (CONTRACT §29). */
export function recordScheduleChange(tenant: Tenant, id: string): void {
  tenant.sqlite
    .query<unknown, [string]>(
      "INSERT OR REPLACE INTO change_log (resource, entity_id, op, changed_at, external_id) SELECT 'schedule', id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), external_id FROM schedules WHERE id = ?",
    )
    .run(id)
}
