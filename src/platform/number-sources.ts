/**
 * How a decoded JSON value remembers the text each of its numbers was written as, so money is
 * read exactly (a double cannot hold 92233720368.54775807) and fingerprints see what was sent.
 * `decodeJson` (json.ts) records the texts; money, canonical JSON and the MCP tools read them.
 */

/** Source texts of the numbers an object (by key) or an array (by index) holds. */
export type Sources = Map<string, string> | string[]

/**
 * Where a decoded object or array keeps its numbers' sources: a non-enumerable symbol
 * property, unseen by Object.keys, JSON.stringify and schema checks. (A WeakMap costs several
 * times more per holder, and its entries slow every collection while a big body is live.)
 */
const SOURCES = Symbol('pfin.numberSources')
type WithSources = { [SOURCES]?: Sources }

export const sourcesOf = (holder: object): Sources | undefined => (holder as WithSources)[SOURCES]

/** Gives `holder` the sources of its numbers; the caller owns `sources` from then on through `holder`. */
export function attachSources(holder: object, sources: Sources): void {
  Object.defineProperty(holder, SOURCES, { value: sources })
}

/** The source text kept for `key` (an index for an array's sources), if any. */
export function sourceAt(sources: Sources | undefined, key: string | number): string | undefined {
  if (sources === undefined) return undefined
  return Array.isArray(sources) ? sources[Number(key)] : sources.get(String(key))
}

/** The text a number was written as in the request, or its shortest form when it was not decoded here. */
export function numberSource(holder: object, key: string): string {
  return sourceAt(sourcesOf(holder), key) ?? String((holder as Record<string, unknown>)[key])
}

/**
 * `from`'s own entries but the keys in `omit`, as a new object that keeps their numbers'
 * source texts: money read from the copy is as exact as from the decoded original.
 */
export function withoutKeys(from: Record<string, unknown>, omit: ReadonlySet<string>): Record<string, unknown> {
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(from)) if (!omit.has(key)) copy[key] = from[key]
  const sources = sourcesOf(from)
  if (sources !== undefined) attachSources(copy, sources)
  return copy
}

/**
 * `to`, a shallow copy of the decoded `from` made elsewhere (a library's), given `from`'s
 * numbers' source texts when it holds exactly `from`'s own entries; otherwise `to` as it is.
 */
export function adoptNumberSources<T extends Record<string, unknown>>(from: Record<string, unknown>, to: T): T {
  const sources = sourcesOf(from)
  if (sources === undefined || sourcesOf(to) !== undefined) return to
  const keys = Object.keys(to)
  if (keys.length !== Object.keys(from).length || keys.some((key) => !Object.hasOwn(from, key) || !Object.is(from[key], to[key]))) return to
  attachSources(to, sources)
  return to
}
