import { ApiError } from './errors.ts'

/**
 * Entity tags of single resources (CONTRACT §25). A resource's tag is a hash of its `data` exactly
 * as answers write it, so it changes with every stored change anyone could see (two changes in one
 * millisecond included, which `updatedAt` alone would not tell apart), is the same whichever route
 * shows the resource (GET, PATCH, an upsert's envelope, an idempotent replay), and costs no column
 * and no query. It is strong: it names these bytes of JSON, whatever content coding carries them.
 */

/** The tag of a resource whose JSON text is `json`: 128 bits of its SHA-256, quoted. */
export function entityTag(json: string): string {
  return `"${Bun.CryptoHasher.hash('sha256', json, 'base64url').slice(0, 22)}"`
}

const SINGLE = '{"data":'
const UPSERT_CREATED = '{"operation":"created","data":'
const UPSERT_UPDATED = '{"operation":"updated","data":'

/**
 * The tag of the resource in a single-resource answer's body: `{"data":…}` or an upsert's
 * `{"operation":…,"data":…}` (`data` last in both, as the envelopes are built). The text of
 * `data` is cut out of the body rather than serialized again: the body is what was sent, or
 * what is replayed, byte for byte.
 */
export function entityTagOfBody(body: string): string | undefined {
  if (!body.endsWith('}')) return undefined
  const start = body.startsWith(SINGLE) ? SINGLE.length : body.startsWith(UPSERT_CREATED) || body.startsWith(UPSERT_UPDATED) ? UPSERT_CREATED.length : -1
  return start === -1 ? undefined : entityTag(body.slice(start, -1))
}

/** The tags of an `If-Match` or `If-None-Match` list, each with whether it is weak; `*` alone is `'*'`. */
function parseTags(header: string): '*' | { tag: string; weak: boolean }[] {
  if (header.trim() === '*') return '*'
  const tags: { tag: string; weak: boolean }[] = []
  for (const match of header.matchAll(/(W\/)?("[^"]*")/g)) tags.push({ tag: match[2] as string, weak: match[1] !== undefined })
  return tags
}

/** `If-None-Match` (RFC 9110 §13.1.2): true when the client's copy is current, by weak comparison. */
export function noneMatchFails(header: string | null, etag: string): boolean {
  if (header === null) return false
  const tags = parseTags(header)
  return tags === '*' || tags.some(({ tag }) => tag === etag)
}

/**
 * `If-Match` (RFC 9110 §13.1.1) on a resource whose current tag is `etag`: strong comparison, so a
 * weak tag never matches; `*` matches any resource that exists. Throws 412 `precondition_failed`
 * with the current tag in `ETag`, before anything is written.
 */
export function assertIfMatch(header: string, etag: string): void {
  const tags = parseTags(header)
  if (tags === '*' || tags.some(({ tag, weak }) => !weak && tag === etag)) return
  throw new ApiError(
    'precondition_failed',
    `If-Match does not match the resource as it is now: it changed since you read it (or the tag is not one of its ETags). Nothing was written; its current ETag is in the ETag header: read it again, apply your change, and retry with that tag`,
    { etag },
  )
}
