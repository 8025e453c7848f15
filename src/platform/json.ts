import { MAX_SIGNIFICANT_DIGITS, significantDigitCount } from './decimal.ts'
import { attachSources, type Sources, sourcesOf } from './number-sources.ts'

/**
 * JSON decoding that remembers each number's source text (number-sources.ts), so money can be
 * read exactly and request fingerprints see what was sent.
 *
 * Every step here costs linear time in the text's length whatever its shape (CONTRACT §14):
 * the server is single-threaded, so a body that costs quadratic time holds every request.
 */
declare global {
  interface JSON {
    rawJSON(text: string): unknown
  }
}

/** Deeper bodies are refused before they are parsed; no request body of this API nests more than a few levels. */
export const MAX_DEPTH = 64

/** Where in a decoded value: object keys and array indexes from the root. */
export type JsonPath = (string | number)[]

/** A body that is valid JSON but beyond what the server reads: too deep, or a number with too many digits. */
export class JsonLimitError extends Error {
  constructor(
    readonly limit: 'depth' | 'digits',
    readonly path: JsonPath,
  ) {
    super(limit === 'depth' ? `nested more than ${MAX_DEPTH} levels deep` : `a number with more than ${MAX_SIGNIFICANT_DIGITS} significant digits`)
  }
}

/**
 * Parses JSON text (SyntaxError when it is not JSON; JsonLimitError past the limits above)
 * and records the source text of every number in it.
 *
 * Sources are found by one scan of the text next to the parsed value rather than through a
 * `JSON.parse` reviver: a reviver calls back into JavaScript for every value, which costs
 * tens of times the parse itself on a body of many small values.
 */
export function decodeJson(text: string): unknown {
  assertDepth(text)
  const value: unknown = JSON.parse(text)
  recordNumberSources(text, value)
  return value
}

/**
 * Parses JSON text into a value that `JSON.stringify` writes back with every number as it
 * was written: a number a double cannot hold (an 18-digit amount) becomes `JSON.rawJSON` of
 * its text. For passing on JSON this server wrote (money is exact, CONTRACT §4) inside
 * another JSON document.
 */
export function decodeJsonVerbatim(text: string): unknown {
  const value = decodeJson(text)
  keepNumbersVerbatim(value)
  return value
}

function keepNumbersVerbatim(value: unknown): void {
  if (value === null || typeof value !== 'object') return
  const holder = value as Record<string, unknown>
  const sources = sourcesOf(holder)
  if (sources !== undefined) {
    const entries: Iterable<[string | number, string]> = Array.isArray(sources) ? sources.entries() : sources
    for (const [key, source] of entries) {
      // A double's own shortest form needs nothing; only what it would round is kept as text.
      // Only a number: a duplicate key's dropped value may have left a text at a key or index
      // that the kept value does not hold, or holds as another type.
      const value = holder[key]
      if (source !== undefined && typeof value === 'number' && String(value) !== source) holder[key] = JSON.rawJSON(source)
    }
  }
  for (const item of Array.isArray(holder) ? holder : Object.values(holder)) keepNumbersVerbatim(item)
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const COMMA = 0x2c
const MINUS = 0x2d
const ZERO = 0x30
const NINE = 0x39

/** The index of the quote that closes the string opening at `start` (text.length when there is none). */
function stringEnd(text: string, start: number): number {
  let at = start
  for (;;) {
    at = text.indexOf('"', at + 1)
    if (at === -1) return text.length
    // The quote is escaped when an odd number of backslashes precede it.
    let backslashes = 0
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return at
  }
}

/** Refuses deep nesting before `JSON.parse` spends time (and later walks spend stack) on it. */
function assertDepth(text: string): void {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) i = stringEnd(text, i)
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > MAX_DEPTH) throw new JsonLimitError('depth', [])
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--
  }
}

/** A container being scanned: the parsed object or array it is (null inside a value that was overwritten by a duplicate key). */
interface Frame {
  holder: Record<string, unknown> | unknown[] | null
  sources: Sources | null
  isArray: boolean
  index: number
  /** The current key as it stands in the text (quotes excluded), sliced and unescaped only when needed. */
  keyStart: number
  keyEnd: number
  awaitingKey: boolean
}

/**
 * Walks valid JSON text token by token, alongside the value `JSON.parse` made of it, and
 * records each number's text for its holder and key. A duplicate key resolves to the value
 * `JSON.parse` kept (the last one), whose numbers come later in the text and so win here too.
 * Short integers are not recorded (their shortest form is their text) unless their holder
 * keeps other sources.
 */
function recordNumberSources(text: string, root: unknown): void {
  // One frame per depth, reused: a body of many small containers allocates none.
  const frames: Frame[] = []
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    const top = depth > 0 ? (frames[depth - 1] as Frame) : undefined
    if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      const isArray = c === OPEN_ARRAY
      const value = top === undefined ? root : childOf(text, top)
      const matches = typeof value === 'object' && value !== null && Array.isArray(value) === isArray
      let frame = frames[depth]
      if (!frame) {
        frame = { holder: null, sources: null, isArray, index: 0, keyStart: 0, keyEnd: 0, awaitingKey: false }
        frames.push(frame)
      }
      frame.holder = matches ? (value as Frame['holder']) : null
      frame.sources = null
      frame.isArray = isArray
      frame.index = 0
      frame.awaitingKey = !isArray
      depth++
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--
    } else if (c === COMMA) {
      if (top?.isArray) top.index++
      else if (top) top.awaitingKey = true
    } else if (c === QUOTE) {
      const end = stringEnd(text, i)
      if (top?.awaitingKey) {
        top.keyStart = i + 1
        top.keyEnd = end
        top.awaitingKey = false
      }
      i = end
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      const end = numberEnd(text, i)
      if (end - i > MAX_SIGNIFICANT_DIGITS) assertDigits(text, text.slice(i, end), frames.slice(0, depth))
      // A bare number as the whole body has no holder; only its fingerprint reads it. Once a
      // holder keeps sources, every later number is kept too: a duplicate key's short integer
      // must replace the text kept for an earlier value of that key.
      if (top?.holder && (top.sources !== null || sourcesOf(top.holder) !== undefined || !isShortInteger(text, i, end))) {
        record(text, top, text.slice(i, end))
      }
      i = end - 1
    }
  }
}

/** The frame's current key, unescaped when it has escapes. */
function keyOf(text: string, frame: Frame): string {
  const raw = text.slice(frame.keyStart, frame.keyEnd)
  return raw.includes('\\') ? (JSON.parse(text.slice(frame.keyStart - 1, frame.keyEnd + 1)) as string) : raw
}

/** The value the frame's current key or index holds, as `JSON.parse` left it. */
function childOf(text: string, frame: Frame): unknown {
  if (frame.holder === null) return undefined
  if (Array.isArray(frame.holder)) return frame.holder[frame.index]
  const key = keyOf(text, frame)
  // Own properties only: a "__proto__" key is an own property after JSON.parse.
  return Object.hasOwn(frame.holder, key) ? frame.holder[key] : undefined
}

function record(text: string, frame: Frame, source: string): void {
  if (frame.sources === null) {
    // A holder seen before (a duplicate key resolves to the value kept) keeps its sources.
    const holder = frame.holder as object
    let sources = sourcesOf(holder)
    if (!sources) {
      sources = frame.isArray ? [] : new Map()
      attachSources(holder, sources)
    }
    frame.sources = sources
  }
  if (Array.isArray(frame.sources)) frame.sources[frame.index] = source
  else frame.sources.set(keyOf(text, frame), source)
}

/** An integer of at most 15 digits (not -0) reads back from its double as written: no need to keep its text. */
function isShortInteger(text: string, start: number, end: number): boolean {
  const digitsFrom = text.charCodeAt(start) === MINUS ? start + 1 : start
  if (end - digitsFrom > 15) return false
  for (let i = digitsFrom; i < end; i++) {
    const c = text.charCodeAt(i)
    if (c < ZERO || c > NINE) return false
  }
  return !(digitsFrom > start && end - digitsFrom === 1 && text.charCodeAt(digitsFrom) === ZERO)
}

function numberEnd(text: string, start: number): number {
  let end = start + 1
  for (;;) {
    const c = text.charCodeAt(end)
    // digits, '.', 'e', 'E', '+', '-': the characters a JSON number is made of
    if ((c >= ZERO && c <= NINE) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === MINUS) end++
    else return end
  }
}

/** Refuses a number of more than MAX_SIGNIFICANT_DIGITS digits, naming where it stands. */
function assertDigits(text: string, source: string, stack: Frame[]): void {
  // A lexeme significantDigitCount cannot read (an exponent past 2^53) is left to the field's own check.
  if ((significantDigitCount(source) ?? 0) <= MAX_SIGNIFICANT_DIGITS) return
  throw new JsonLimitError(
    'digits',
    stack.map((frame) => (frame.isArray ? frame.index : keyOf(text, frame))),
  )
}

/**
 * The path to the first string (or object key) that is not well-formed UTF-16, i.e. holds
 * a lone surrogate (which a `\\ud800`-style escape can spell); null when all text is sound.
 * `key` says whether the culprit is the name at the end of the path rather than its value.
 */
export function findIllFormedText(value: unknown): { path: JsonPath; key: boolean } | null {
  const path: JsonPath = []
  const visit = (item: unknown): boolean | null => {
    if (typeof item === 'string') return item.isWellFormed() ? null : false
    if (item === null || typeof item !== 'object') return null
    const entries: [string | number, unknown][] = Array.isArray(item) ? item.map((element, index) => [index, element]) : Object.entries(item)
    for (const [key, element] of entries) {
      path.push(key)
      if (typeof key === 'string' && !key.isWellFormed()) return true
      const found = visit(element)
      if (found !== null) return found
      path.pop()
    }
    return null
  }
  const found = visit(value)
  return found === null ? null : { path, key: found }
}
