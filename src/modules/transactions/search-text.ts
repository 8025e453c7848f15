import { eq } from 'drizzle-orm'
import { lazyStatements } from '../../db/statements.ts'
import { searchState, transactionSearch } from '../../db/tenant/schema.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { normalizeName } from '../payees/normalize.ts'

/**
 * The text `q` searches in each transaction (CONTRACT §26), kept in `transaction_search` (and its
 * FTS5 trigram index) by the write path: its note, the bank's `originalDescription` and its legs'
 * notes, each normalized as payee names are, joined by newlines (a query never holds one:
 * normalizing turns it into a space, so no match spans two texts). A transaction's payee is
 * searched through the payees' own normalized names and aliases, not copied here, so renaming a
 * payee rewrites nothing.
 *
 * A new text field is one more entry in `textsOf` (and in `fill`'s SELECT) and a bump of
 * SEARCH_TEXT_VERSION: every file is then filled again before its next search.
 */
export const SEARCH_TEXT_VERSION = 1

/** What the text is made of: the transaction's own texts and its legs'. */
export interface Searchable {
  note: string | null
  originalDescription: string | null
}

function textsOf(row: Searchable, legs: readonly { note: string | null }[]): (string | null)[] {
  return [row.note, row.originalDescription, ...legs.map((leg) => leg.note)]
}

/** The normalized text of a transaction, or null when it has none. */
export function searchTextOf(row: Searchable, legs: readonly { note: string | null }[]): string | null {
  const parts: string[] = []
  for (const text of textsOf(row, legs)) {
    if (text === null) continue
    const normalized = normalizeName(text)
    if (normalized !== '') parts.push(normalized)
  }
  return parts.length === 0 ? null : parts.join('\n')
}

const statements = lazyStatements({
  upsert: (db) =>
    db.$client.prepare<never, [string, string]>(
      'INSERT INTO transaction_search (transaction_id, text) VALUES (?1, ?2) ON CONFLICT (transaction_id) DO UPDATE SET text = excluded.text WHERE text IS NOT excluded.text',
    ),
  remove: (db) => db.$client.prepare<never, [string]>('DELETE FROM transaction_search WHERE transaction_id = ?1'),
  version: (db) => db.$client.prepare<{ version: number | bigint }, []>('SELECT version FROM search_state WHERE id = 1'),
})

/** Stores a written transaction's text (or removes its row when it has none); call inside its write. */
export function storeSearchText(tenant: Tenant, transactionId: string, text: string | null): void {
  const prepared = tenant.prepared(statements)
  if (text === null) prepared.remove.run(transactionId)
  else prepared.upsert.run(transactionId, text)
}

/** Each open file's state is checked once; a file filled by this process stays filled (its writes keep it). */
const current = new WeakSet<Tenant>()

/**
 * Makes sure the file's search text is that of this version of the builder, filling it from the
 * transactions when it is not (a file made before search, or before a text was added to it):
 * once per file and version, in one write, reading each transaction and leg once. Call before a
 * search, outside any transaction.
 */
export function ensureSearchText(tenant: Tenant): void {
  if (current.has(tenant)) return
  const stored = tenant.prepared(statements).version.get()
  if (stored && Number(stored.version) === SEARCH_TEXT_VERSION) {
    current.add(tenant)
    return
  }
  tenant.write(() => {
    // Read again inside the write: another process may have filled it meanwhile.
    const again = tenant.prepared(statements).version.get()
    if (again && Number(again.version) === SEARCH_TEXT_VERSION) return
    fill(tenant)
    tenant.db
      .insert(searchState)
      .values({ id: 1, version: SEARCH_TEXT_VERSION })
      .onConflictDoUpdate({ target: searchState.id, set: { version: SEARCH_TEXT_VERSION } })
      .run()
  })
  current.add(tenant)
}

/**
 * Fills `transaction_search` from every transaction and leg, and its index with one FTS5
 * `rebuild`: the triggers that keep the index in step row by row cost about 100 µs a row (FTS5
 * writes a segment per statement), a rebuild a few. They are set aside for the fill and made
 * again from their own stored SQL, inside the same transaction, so the migration stays their
 * only source.
 */
function fill(tenant: Tenant): void {
  const sqlite = tenant.sqlite
  const triggers = sqlite.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'transaction_search' ORDER BY name").values() as [
    string,
    string,
  ][]
  for (const [name] of triggers) sqlite.run(`DROP TRIGGER "${name}"`)
  tenant.db.delete(transactionSearch).run()
  const legNotes = new Map<string, { note: string | null }[]>()
  const legs = sqlite.prepare('SELECT transaction_id, note FROM transaction_splits WHERE note IS NOT NULL ORDER BY transaction_id, position').values() as [
    string,
    string,
  ][]
  for (const [transactionId, note] of legs) {
    const notes = legNotes.get(transactionId)
    if (notes) notes.push({ note })
    else legNotes.set(transactionId, [{ note }])
  }
  const insert = sqlite.prepare<never, [string, string]>('INSERT INTO transaction_search (transaction_id, text) VALUES (?1, ?2)')
  const rows = sqlite
    .prepare('SELECT id, note, original_description FROM transactions WHERE note IS NOT NULL OR original_description IS NOT NULL OR has_splits = 1')
    .values() as [string, string | null, string | null][]
  for (const [id, note, originalDescription] of rows) {
    const text = searchTextOf({ note, originalDescription }, legNotes.get(id) ?? [])
    if (text !== null) insert.run(id, text)
  }
  sqlite.run("INSERT INTO transaction_search_fts (transaction_search_fts) VALUES ('rebuild')")
  for (const [, sql] of triggers) sqlite.run(sql)
}

/** The file's stored text of one transaction (for tests and checks). */
export function storedSearchText(tenant: Tenant, transactionId: string): string | null {
  return (
    tenant.db.select({ text: transactionSearch.text }).from(transactionSearch).where(eq(transactionSearch.transactionId, transactionId)).get()?.text ?? null
  )
}
