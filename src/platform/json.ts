/**
 * JSON decoding that remembers each number's source text, so money can be read exactly
 * (a double cannot hold 92233720368.54775807) and request fingerprints see what was sent.
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
/**
 * More significant digits than any number of this API needs (a double carries 17, money at
 * most 19); the limit keeps exact arithmetic on a number's digits small.
 */
export const MAX_SIGNIFICANT_DIGITS = 40

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

/** Source texts of the numbers an object (by key) or an array (by index) holds. */
type Sources = Map<string, string> | string[]
/**
 * Where a decoded object or array keeps its numbers' sources: a non-enumerable symbol
 * property, unseen by Object.keys, JSON.stringify and schema checks. (A WeakMap costs several
 * times more per holder, and its entries slow every collection while a big body is live.)
 */
const SOURCES = Symbol('pfin.numberSources')
type WithSources = { [SOURCES]?: Sources }
const sourcesOf = (holder: object): Sources | undefined => (holder as WithSources)[SOURCES]

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

/** The text a number was written as in the request, or its shortest form when it was not decoded here. */
export function numberSource(holder: object, key: string): string {
  const sources = sourcesOf(holder)
  const source = sources === undefined ? undefined : Array.isArray(sources) ? sources[Number(key)] : sources.get(key)
  return source ?? String((holder as Record<string, unknown>)[key])
}

/**
 * `from`'s own entries but the keys in `omit`, as a new object that keeps their numbers'
 * source texts: money read from the copy is as exact as from the decoded original.
 */
export function withoutKeys(from: Record<string, unknown>, omit: ReadonlySet<string>): Record<string, unknown> {
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(from)) if (!omit.has(key)) copy[key] = from[key]
  const sources = sourcesOf(from)
  if (sources !== undefined) Object.defineProperty(copy, SOURCES, { value: sources })
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
  Object.defineProperty(to, SOURCES, { value: sources })
  return to
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
      if (source !== undefined && String(holder[key]) !== source) holder[key] = JSON.rawJSON(source)
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
      Object.defineProperty(holder, SOURCES, { value: sources })
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
  // A lexeme scanDecimal cannot read (an exponent past 2^53) is left to the field's own check.
  if (!scanDecimal(source) || scanned.zero) return
  const { first, intEnd, last } = scanned
  const digits = last - first + 1 - (first < intEnd && last > intEnd ? 1 : 0)
  if (digits <= MAX_SIGNIFICANT_DIGITS) return
  throw new JsonLimitError(
    'digits',
    stack.map((frame) => (frame.isArray ? frame.index : keyOf(text, frame))),
  )
}

/** A decimal number exactly: `digits × 10^exponent`, digits without leading or trailing zeros ('0' for zero). */
export interface Decimal {
  negative: boolean
  digits: string
  exponent: number
}

const DOT = 0x2e
const isDigit = (c: number) => c >= ZERO && c <= NINE

/**
 * Where a lexeme's significant digits are and what power of ten the last one has, filled in
 * by scanDecimal. One object reused for every number: canonicalising a body of many numbers
 * allocates nothing per number but its canonical text.
 */
const scanned = { negative: false, zero: false, first: 0, intEnd: 0, last: 0, exponent: 0 }

/**
 * Scans a number lexeme (`-?\d+(\.\d+)?([eE][+-]?\d+)?`) by position, without a bigint:
 * linear in its length however many zeros pad it. False when it is not one, or when its
 * power of ten is beyond a safe integer.
 */
function scanDecimal(text: string): boolean {
  const negative = text.charCodeAt(0) === MINUS
  const intStart = negative ? 1 : 0
  let at = intStart
  while (isDigit(text.charCodeAt(at))) at++
  const intEnd = at
  if (intEnd === intStart) return false
  let fractionEnd = intEnd
  if (text.charCodeAt(at) === DOT) {
    at++
    while (isDigit(text.charCodeAt(at))) at++
    if (at === intEnd + 1) return false
    fractionEnd = at
  }
  let power = 0
  if (at < text.length) {
    const e = text.charCodeAt(at++)
    if (e !== 0x65 && e !== 0x45) return false
    const sign = text.charCodeAt(at)
    if (sign === 0x2b || sign === MINUS) at++
    const expDigits = at
    for (let c = text.charCodeAt(at); isDigit(c); c = text.charCodeAt(++at)) {
      // Past 2^53 the sum is inexact, but then the exponent is refused below anyway.
      power = power * 10 + (c - ZERO)
    }
    if (at === expDigits || at !== text.length) return false
    if (sign === MINUS) power = -power
  }
  // The first and last non-zero digits, stepping over the decimal point.
  let first = intStart
  while (first < fractionEnd && (text.charCodeAt(first) === ZERO || first === intEnd)) first++
  scanned.zero = first === fractionEnd
  if (scanned.zero) return true
  let last = fractionEnd - 1
  while (text.charCodeAt(last) === ZERO || last === intEnd) last--
  // The place value of the last significant digit: 10^(intEnd - 1 - last) left of the point, 10^(intEnd - last) right of it.
  const exponent = power + (last < intEnd ? intEnd - 1 - last : intEnd - last)
  if (!Number.isSafeInteger(exponent) || !Number.isSafeInteger(power)) return false
  scanned.negative = negative
  scanned.first = first
  scanned.intEnd = intEnd
  scanned.last = last
  scanned.exponent = exponent
  return true
}

/** The significant digits scanDecimal found, without the decimal point. */
function scannedDigits(text: string): string {
  const { first, intEnd, last } = scanned
  return first < intEnd && last > intEnd ? text.slice(first, intEnd) + text.slice(intEnd + 1, last + 1) : text.slice(first, last + 1)
}

/** A number lexeme as its significant digits and a power of ten; null when it is not one. */
export function parseDecimalLexeme(text: string): Decimal | null {
  if (!scanDecimal(text)) return null
  if (scanned.zero) return { negative: false, digits: '0', exponent: 0 }
  return { negative: scanned.negative, digits: scannedDigits(text), exponent: scanned.exponent }
}

/**
 * Canonical JSON text: keys sorted, numbers in one exact normal form.
 * Equal requests give equal text whatever their key order or number spelling.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'number') return canonicalValue(value)
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  const sources = sourcesOf(value)
  if (Array.isArray(value)) {
    const parts = new Array<string>(value.length)
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      parts[i] = typeof item === 'number' ? canonicalItem(sources, i, item) : canonicalJson(item)
    }
    return `[${parts.join(',')}]`
  }
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).sort()
  const parts = new Array<string>(keys.length)
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string
    const item = record[key]
    parts[i] = `${JSON.stringify(key)}:${typeof item === 'number' ? canonicalItem(sources, key, item) : canonicalJson(item)}`
  }
  return `{${parts.join(',')}}`
}

function canonicalItem(sources: Sources | undefined, key: string | number, value: number): string {
  const source = sources === undefined ? undefined : Array.isArray(sources) ? sources[key as number] : sources.get(key as string)
  return source === undefined ? canonicalValue(value) : canonicalNumber(source)
}

/** The canonical form of a number whose text was not kept (a short integer, or a value not decoded here). */
function canonicalValue(value: number): string {
  if (!Number.isSafeInteger(value)) return canonicalNumber(String(value))
  if (value === 0) return '0e0'
  // Trailing zeros become the exponent, as parseDecimalLexeme does.
  const text = String(value)
  let end = text.length
  while (text.charCodeAt(end - 1) === ZERO) end--
  return `${text.slice(0, end)}e${text.length - end}`
}

/** `digits` e `exponent`, as parseDecimalLexeme reads the lexeme (a lexeme it cannot read stands for itself). */
function canonicalNumber(lexeme: string): string {
  if (!scanDecimal(lexeme)) return lexeme
  if (scanned.zero) return '0e0'
  return `${scanned.negative ? '-' : ''}${scannedDigits(lexeme)}e${scanned.exponent}`
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
