import { ApiError } from './errors.ts'

/**
 * Keyset pagination (CONTRACT §9). A cursor is the sort key of the last row of a page,
 * base64url-encoded JSON, so a page never repeats or skips rows while others write.
 */
export type CursorKey = (string | number)[]

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url')
}

/** Decodes a cursor made for `shape` (one type letter per key part: s = string, n = number). */
export function decodeCursor(cursor: string | undefined, shape: string): CursorKey | undefined {
  if (cursor === undefined) return undefined
  let key: unknown
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    key = undefined
  }
  const valid =
    Array.isArray(key) &&
    key.length === shape.length &&
    key.every((part, i) => (shape[i] === 's' ? typeof part === 'string' : typeof part === 'number' && Number.isSafeInteger(part)))
  if (!valid) throw new ApiError('validation_failed', "query parameter 'cursor' is not a cursor from this list")
  return key as CursorKey
}

/** Cuts one extra row off a page fetched with `limit + 1`: the rows to show and the cursor after them. */
function cut<Row>(rows: Row[], limit: number, keyOf: (row: Row) => CursorKey) {
  const hasMore = rows.length > limit
  const pageRows = hasMore ? rows.slice(0, limit) : rows
  const last = pageRows[pageRows.length - 1]
  return { pageRows, nextCursor: hasMore && last !== undefined ? encodeCursor(keyOf(last)) : null, hasMore }
}

/** The envelope of a page fetched with `limit + 1`. */
export function page<Row, Item>(rows: Row[], limit: number, keyOf: (row: Row) => CursorKey, toItem: (row: Row) => Item) {
  const { pageRows, nextCursor, hasMore } = cut(rows, limit, keyOf)
  return { data: pageRows.map(toItem), nextCursor, hasMore }
}
