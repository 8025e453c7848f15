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

/**
 * The tag of the resource in a single-resource answer's body: the object under its top-level
 * `data` key, wherever the envelope puts it (`{"data":…}`, an upsert's `{"operation":…,"data":…}`,
 * a write's `{"data":…,"rulesApplied":…}`). The text of `data` is cut out of the body rather than
 * serialized again: the body is what was sent, or what is replayed, byte for byte.
 */
export function entityTagOfBody(body: string): string | undefined {
  const data = topLevelDataText(body)
  return data === undefined ? undefined : entityTag(data)
}

const DATA_KEY = '"data":'

/** The text of the object under the top-level `data` key of a JSON object, found in one pass. */
function topLevelDataText(body: string): string | undefined {
  let depth = 0
  let inString = false
  let start = -1
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // a backslash escapes the next character
      else if (c === 0x22) inString = false
      continue
    }
    if (c === 0x22) {
      if (depth === 1 && start === -1 && body.startsWith(DATA_KEY, i) && body.charCodeAt(i + DATA_KEY.length) === 0x7b) {
        start = i + DATA_KEY.length
        i = start - 1
        continue
      }
      inString = true
    } else if (c === 0x7b || c === 0x5b) depth++
    else if (c === 0x7d || c === 0x5d) {
      depth--
      if (depth === 1 && start !== -1) return body.slice(start, i + 1)
    }
  }
  return undefined
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
