import fc from 'fast-check'

/**
 * JSON text as a client may write it, for the property tests of src/platform's JSON pieces:
 * numbers in every form JSON allows (exponents, signs, padding zeros, -0, doubles' shortest
 * forms), strings with every kind of escape (lone surrogates included), duplicate keys (also
 * spelt with escapes), `__proto__`, whitespace between any two tokens, and nesting to any depth.
 * The generated tree is kept beside its text, so a test knows what the text holds even where
 * `JSON.parse` drops it (a duplicate key's earlier value).
 */

export type JsonNode =
  | { kind: 'number'; lexeme: string }
  | { kind: 'string'; lexeme: string }
  | { kind: 'literal'; lexeme: 'true' | 'false' | 'null' }
  | { kind: 'array'; items: JsonNode[] }
  | { kind: 'object'; entries: [key: string, value: JsonNode][] }

const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max })

/** A JSON number lexeme: `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`, at most 40 significant digits unless `long`. */
export function numberLexeme({ long = false } = {}): fc.Arbitrary<string> {
  const width = long ? 30 : 20
  const integer = fc.oneof(
    fc.constant('0'),
    fc.tuple(fc.constantFrom(...'123456789'), digits(0, width - 1)).map(([a, b]) => a + b),
  )
  const fraction = fc.option(
    digits(1, width).map((d) => `.${d}`),
    { nil: '' },
  )
  const exponent = fc.option(
    fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits(1, 4)).map((parts) => parts.join('')),
    { nil: '' },
  )
  const written = fc.tuple(fc.constantFrom('', '-'), integer, fraction, exponent).map((parts) => parts.join(''))
  // What a serializer writes: 5e-324, 1e+21, 0.1, 123.456, …
  const shortest = fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value))
  const tricky = fc.constantFrom('-0', '0.0', '0e0', '-0.000e-5', '1E400', '1e-400', '92233720368.54775807', '9007199254740993', '1.7976931348623157e308')
  return fc.oneof({ arbitrary: written, weight: 4 }, { arbitrary: shortest, weight: 2 }, { arbitrary: tricky, weight: 1 })
}

const ESCAPES = ['\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t']
const hex4 = (code: number, upper: boolean) => {
  const text = code.toString(16).padStart(4, '0')
  return `\\u${upper ? text.toUpperCase() : text}`
}

/** One character of a string's text, as written: itself, a short escape, or a \u escape (a lone surrogate at times). */
const stringPiece: fc.Arbitrary<string> = fc.oneof(
  {
    arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }).filter((c) => ![...c].some((ch) => ch === '"' || ch === '\\' || ch < ' ')),
    weight: 6,
  },
  { arbitrary: fc.constantFrom(...ESCAPES), weight: 2 },
  { arbitrary: fc.tuple(fc.integer({ min: 0, max: 0xffff }), fc.boolean()).map(([code, upper]) => hex4(code, upper)), weight: 2 },
  // Backslashes right before the closing quote: the scanner must count them.
  { arbitrary: fc.constantFrom('\\\\\\\\', '\\\\\\"'), weight: 1 },
)

/** A string's text between its quotes. */
export const stringLexeme: fc.Arbitrary<string> = fc.array(stringPiece, { maxLength: 8 }).map((pieces) => pieces.join(''))

/** Keys from a small pool, so that objects repeat keys, spelt plainly or with escapes. */
const keyLexeme: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom('a', '\\u0061', 'b', 'amount', '__proto__', '\\u005f_proto__', '', 'x\\"y', 'ü', '\\u00fc'), weight: 3 },
  { arbitrary: stringLexeme, weight: 1 },
)

export const literal = fc.constantFrom<'true' | 'false' | 'null'>('true', 'false', 'null')

/** A JSON tree of at most `maxDepth` levels of containers. */
export function jsonNode({ maxDepth = 5, long = false } = {}): fc.Arbitrary<JsonNode> {
  const { node } = fc.letrec<{ node: JsonNode }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', maxDepth },
      numberLexeme({ long }).map((lexeme): JsonNode => ({ kind: 'number', lexeme })),
      stringLexeme.map((lexeme): JsonNode => ({ kind: 'string', lexeme })),
      literal.map((lexeme): JsonNode => ({ kind: 'literal', lexeme })),
      fc.array(tie('node'), { maxLength: 5 }).map((items): JsonNode => ({ kind: 'array', items })),
      fc.array(fc.tuple(keyLexeme, tie('node')), { maxLength: 5 }).map((entries): JsonNode => ({ kind: 'object', entries })),
    ),
  }))
  return node
}

/** `inner` wrapped in `levels` arrays or objects, for nesting around the depth limit. */
export function deeplyNested(inner: fc.Arbitrary<JsonNode>, levels: fc.Arbitrary<number>): fc.Arbitrary<JsonNode> {
  return fc.tuple(inner, levels, fc.array(fc.boolean(), { minLength: 1, maxLength: 8 })).map(([node, count, shapes]) => {
    let wrapped = node
    for (let level = 0; level < count; level++) {
      wrapped = shapes[level % shapes.length] ? { kind: 'array', items: [wrapped] } : { kind: 'object', entries: [['k', wrapped]] }
    }
    return wrapped
  })
}

/** Whitespace JSON allows between tokens. */
export const whitespace = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), maxLength: 3 })

/** The tree as JSON text, with the whitespace `space(i)` gives at each gap between tokens. */
export function render(node: JsonNode, space: (gap: number) => string = () => ''): string {
  let gap = 0
  const ws = () => space(gap++)
  const write = (item: JsonNode): string => {
    switch (item.kind) {
      case 'number':
      case 'literal':
        return item.lexeme
      case 'string':
        return `"${item.lexeme}"`
      case 'array':
        return `[${ws()}${item.items.map((child) => `${write(child)}${ws()}`).join(`,${ws()}`)}]`
      case 'object':
        return `{${ws()}${item.entries.map(([key, child]) => `"${key}"${ws()}:${ws()}${write(child)}${ws()}`).join(`,${ws()}`)}}`
    }
  }
  return `${ws()}${write(node)}${ws()}`
}

/** JSON text with its tree, whitespace spread between the tokens. */
export function jsonText(node: fc.Arbitrary<JsonNode>): fc.Arbitrary<{ node: JsonNode; text: string }> {
  return fc.tuple(node, fc.array(whitespace, { minLength: 1, maxLength: 16 })).map(([tree, spaces]) => ({
    node: tree,
    text: render(tree, (gap) => spaces[gap % spaces.length] as string),
  }))
}

/** How many containers deep the tree nests (0 for a scalar), counting values a later duplicate key replaces. */
export function depthOf(node: JsonNode): number {
  if (node.kind === 'array') return 1 + Math.max(0, ...node.items.map(depthOf))
  if (node.kind === 'object') return 1 + Math.max(0, ...node.entries.map(([, child]) => depthOf(child)))
  return 0
}

/** Every number of the tree in text order, with its path (keys unescaped). */
export function numbersOf(node: JsonNode, path: (string | number)[] = []): { lexeme: string; path: (string | number)[] }[] {
  if (node.kind === 'number') return [{ lexeme: node.lexeme, path }]
  if (node.kind === 'array') return node.items.flatMap((child, index) => numbersOf(child, [...path, index]))
  if (node.kind === 'object') return node.entries.flatMap(([key, child]) => numbersOf(child, [...path, JSON.parse(`"${key}"`) as string]))
  return []
}

/**
 * A decimal lexeme (`-?\d+(\.\d+)?([eE][+-]?\d+)?`) as significant digits and a power of ten,
 * worked out the slow, obvious way: the reference the scanners are checked against. Null when
 * it is not one, or when a power of ten is beyond a safe integer (zero excepted).
 */
export function referenceDecimal(text: string): { negative: boolean; digits: string; exponent: number } | null {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text)
  if (!match) return null
  const [, sign, integer = '', fraction = '', power = '0'] = match
  const all = (integer + fraction).replace(/^0+/, '')
  if (all === '') return { negative: false, digits: '0', exponent: 0 }
  const significant = all.replace(/0+$/, '')
  // In bigints: near 2^53 a double's sum would round.
  const exponent = BigInt(power) - BigInt(fraction.length) + BigInt(all.length - significant.length)
  const safe = (value: bigint) => value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= -BigInt(Number.MAX_SAFE_INTEGER)
  if (!safe(BigInt(power)) || !safe(exponent)) return null
  return { negative: sign === '-', digits: significant, exponent: Number(exponent) }
}
