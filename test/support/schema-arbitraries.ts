import fc from 'fast-check'
import { WELL_FORMED_NOT_BLANK, WELL_FORMED_TEXT } from '../../src/platform/openapi.ts'

/**
 * fast-check arbitraries built by walking a (dereferenced) JSON Schema from /openapi.json:
 * values the schema accepts, values with one field broken, and raw garbage. Numbers are kept
 * as the exact text they are sent as (`Num`), since 1e400, -0 or 0.123456789 do not survive a
 * JavaScript number.
 */

export interface JsonSchema {
  type?: string
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean | JsonSchema
  anyOf?: JsonSchema[]
  items?: JsonSchema
  const?: unknown
  enum?: unknown[]
  minLength?: number
  maxLength?: number
  pattern?: string
  format?: string
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  minItems?: number
  maxItems?: number
  description?: string
}

/** A JSON number sent exactly as `text`. */
export class Num {
  constructor(readonly text: string) {}
  [fc.toStringMethod](): string {
    return `Num(${this.text})`
  }
}

export type Json = null | boolean | string | Num | Json[] | { [key: string]: Json }

/** JSON text with every `Num` written as its own text; string escapes are JSON.stringify's. */
export function toJsonText(value: Json): string {
  if (value instanceof Num) return value.text
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`
  return `{${Object.entries(value)
    .map(([key, item]) => `${JSON.stringify(key)}:${toJsonText(item)}`)
    .join(',')}}`
}

/** A plain JSON value (as fc.jsonValue makes) with its numbers as `Num`. */
export function fromPlain(value: unknown): Json {
  if (typeof value === 'number') return new Num(JSON.stringify(value))
  if (Array.isArray(value)) return value.map(fromPlain)
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromPlain(v)]))
  return value as Json
}

/** Pools of strings for fields whose values should often mean something to the server (ids, names). */
export type Pools = Partial<Record<string, fc.Arbitrary<string>>>

// ---------------------------------------------------------------------------------------------
// Strings

/** Pieces that tend to break text handling: NUL, combining marks, compatibility forms, escapes, direction marks. */
export const ODD_PIECES = [
  '\u0000',
  '\u200b',
  '\ufeff',
  '\u0301',
  'e\u0301',
  'ﬁ',
  'Ａ',
  '😀',
  'İ',
  'ß',
  '\n',
  '\t',
  ' ',
  '%',
  '%00',
  '"',
  '\\',
  '/',
  '<b>',
  "'; DROP TABLE accounts; --",
  '../',
  'null',
  '\u202e',
] as const

export const oddText = fc.array(fc.constantFrom(...ODD_PIECES), { minLength: 1, maxLength: 6 }).map((parts) => parts.join(''))

/** Text that is not valid Unicode: a lone surrogate half (JSON can carry it escaped, `"\ud800"`). */
export const loneSurrogates = fc.constantFrom('\ud800', '\udfff', 'a\ud800b', '\udfff\ud800', `x${'\ud800'.repeat(3)}`)

/** Any valid text, mostly short: ASCII, printable Unicode, any code point, odd pieces. */
export function anyText(maxLength = 30): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.string({ maxLength, unit: 'grapheme-ascii' }) },
    { weight: 2, arbitrary: fc.string({ maxLength, unit: 'grapheme' }) },
    { weight: 1, arbitrary: fc.string({ maxLength, unit: 'binary' }) },
    { weight: 2, arbitrary: oddText },
  )
}

function withinLength(schema: JsonSchema) {
  return (value: string) => value.length >= (schema.minLength ?? 0) && value.length <= (schema.maxLength ?? Number.POSITIVE_INFINITY)
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0')

export const calendarDate = fc.oneof(
  { weight: 6, arbitrary: fc.date({ min: new Date('1970-01-01'), max: new Date('2100-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)) },
  { weight: 1, arbitrary: fc.constantFrom('2024-02-29', '2000-02-29', '0001-01-01', '9999-12-31', '1900-01-01', '2026-12-31') },
)
export const badDate = fc.constantFrom(
  '2026-02-30',
  '2025-02-29',
  '1900-02-29',
  '2026-13-01',
  '2026-00-10',
  '2026-04-31',
  '2026-1-1',
  '20260101',
  '2026-01-01T00:00:00Z',
  ' 2026-01-01',
  '２０２６-01-01',
  '0000-00-00',
  '',
  'yesterday',
)
export const clockTime = fc
  .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.option(fc.integer({ min: 0, max: 59 })))
  .map(([h, m, s]) => `${pad(h)}:${pad(m)}${s === null ? '' : `:${pad(s)}`}`)
export const badTime = fc.constantFrom('24:00', '12:60', '1:00', '12:00:60', '12:00:00.5', '12', '12:00 ', '٠١:٠٠', '-1:00', '')

/** The document's well-formed-text patterns, which any text but a lone surrogate meets (the fuzzer sends those on purpose). */
const isTextRule = (pattern: string) => pattern === WELL_FORMED_TEXT || pattern === WELL_FORMED_NOT_BLANK

/** A string the schema accepts (format, pattern, length), or an id/name from a pool for fields that name records. */
function validString(schema: JsonSchema, field: string, pools: Pools): fc.Arbitrary<string> {
  const pool = pools[field]
  if (pool) return pool
  if (schema.format === 'date') return calendarDate
  if (schema.format === 'time') return clockTime
  const fits = withinLength(schema)
  const max = schema.maxLength ?? 40
  const min = schema.minLength ?? 0
  // The document's well-formed-text rule holds for every text anyText makes; what is left is "not blank".
  const pattern = schema.pattern === WELL_FORMED_TEXT ? undefined : schema.pattern === WELL_FORMED_NOT_BLANK ? '\\S' : schema.pattern
  if (pattern?.startsWith('^')) {
    const regex = new RegExp(pattern)
    return fc.stringMatching(regex).filter(fits)
  }
  const regex = pattern ? new RegExp(pattern) : null
  const accepted = (value: string) => fits(value) && (!regex || regex.test(value))
  const boundaries = ['x'.repeat(max), 'x'.repeat(Math.max(min, 1)), '😀'.repeat(Math.floor(max / 2)), `  padded  `, 'é'.repeat(Math.min(max, 3))].filter(
    accepted,
  )
  return fc.oneof(
    { weight: 8, arbitrary: anyText(Math.min(max, 30)).filter(accepted) },
    { weight: 1, arbitrary: fc.constantFrom(...(boundaries.length ? boundaries : ['x'])) },
  )
}

// ---------------------------------------------------------------------------------------------
// Numbers

const MAX_WHOLE = 92_233_720_368n

/** Exact decimals in the money range, mostly small, with 0–8 decimals; plus the edges. */
function moneyText(positive: boolean): fc.Arbitrary<string> {
  const decimal = fc
    .tuple(
      positive ? fc.constant('') : fc.constantFrom('', '-'),
      fc.oneof({ weight: 4, arbitrary: fc.bigInt({ min: 0n, max: 10_000n }) }, { weight: 1, arbitrary: fc.bigInt({ min: 0n, max: MAX_WHOLE - 1n }) }),
      fc.integer({ min: 0, max: 8 }),
      fc.nat({ max: 99_999_999 }),
    )
    .map(([sign, whole, places, fraction]) => (places === 0 ? `${sign}${whole}` : `${sign}${whole}.${pad(fraction % 10 ** places, places)}`))
    .filter((text) => !positive || Number(text) > 0)
  const edges = positive
    ? ['0.00000001', '92233720368', '1', '1e2', '1.5E+1', '12.50', '0.1']
    : ['0', '-0', '0.00000001', '-0.00000001', '92233720368', '-92233720368', '92233720367.99999999', '1e2', '-1.5E+1', '12.50', '0.1', '0.2']
  return fc.oneof({ weight: 8, arbitrary: decimal }, { weight: 1, arbitrary: fc.constantFrom(...edges) })
}

function doubleText(min?: number): fc.Arbitrary<string> {
  return fc
    .double({ noNaN: true, noDefaultInfinity: true, min: min === undefined ? -1e300 : Number.MIN_VALUE, max: 1e300 })
    .map((d) => (Object.is(d, -0) ? '-0' : String(d)))
}

function validNumber(schema: JsonSchema): fc.Arbitrary<Num> {
  const positive = schema.exclusiveMinimum === 0
  if (schema.type === 'integer') {
    return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 }).map((n) => new Num(String(n)))
  }
  if (schema.description?.includes('exact decimal')) return moneyText(positive).map((text) => new Num(text))
  // Other numbers (exchangeRate, sortOrder): short decimals, long decimals, any double.
  return fc
    .oneof(
      { weight: 3, arbitrary: fc.tuple(fc.integer({ min: positive ? 0 : -1000, max: 1000 }), fc.nat({ max: 9999 })).map(([i, f]) => `${i}.${pad(f, 4)}`) },
      { weight: 1, arbitrary: fc.constantFrom('1.0842', '0.000000001', '123456789.123456789123', '1', '1e-7', '7e3') },
      { weight: 2, arbitrary: doubleText(positive ? 0 : undefined) },
    )
    .filter((text) => !positive || Number(text) > 0)
    .map((text) => new Num(text))
}

// ---------------------------------------------------------------------------------------------
// Values

const isNullable = (schema: JsonSchema) => schema.type === 'null' || (schema.anyOf ?? []).some((option) => option.type === 'null')

/** A value the schema accepts. */
export function validValue(schema: JsonSchema, field: string, pools: Pools): fc.Arbitrary<Json> {
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((option) => validValue(option, field, pools)))
  if (schema.const !== undefined) return fc.constant(schema.const as Json)
  if (schema.enum) return fc.constantFrom(...(schema.enum as Json[]))
  switch (schema.type) {
    case 'string':
      return validString(schema, field, pools)
    case 'number':
    case 'integer':
      return validNumber(schema)
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array': {
      const item = validValue(schema.items ?? {}, field, pools)
      const max = schema.maxItems ?? 10
      return fc.oneof(
        { weight: 6, arbitrary: fc.array(item, { minLength: schema.minItems ?? 0, maxLength: Math.min(max, 4) }) },
        { weight: 1, arbitrary: fc.array(item, { minLength: max, maxLength: max }) },
      )
    }
    case 'object':
      return validObject(schema, pools)
    default:
      return anyJson
  }
}

export function validObject(schema: JsonSchema, pools: Pools): fc.Arbitrary<{ [key: string]: Json }> {
  const properties = schema.properties ?? {}
  const model: Record<string, fc.Arbitrary<Json>> = {}
  for (const [name, property] of Object.entries(properties)) model[name] = validValue(property, name, pools)
  return fc.record(model, { requiredKeys: schema.required ?? [] }) as fc.Arbitrary<{ [key: string]: Json }>
}

export const anyJson: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 2 }).map(fromPlain)

const HUGE_NUMBERS = [
  '1e400',
  '-1e400',
  '1e-400',
  `1${'0'.repeat(300)}`,
  '92233720368.00000001',
  '92233720369',
  '-92233720369',
  '0.123456789',
  `0.${'0'.repeat(60)}1`,
  '-0',
  '1E+2',
  '9007199254740993',
]

/** A value of the wrong type, or the right type just past a limit. */
export function invalidValue(schema: JsonSchema, field: string): fc.Arbitrary<Json> {
  const wrongType = (...types: string[]) => {
    const all: Record<string, Json[]> = {
      string: ['', 'text', '12', 'true', 'null'],
      number: [new Num('0'), new Num('-1'), new Num('12.5')],
      boolean: [true, false],
      array: [[], ['x'], [new Num('1')]],
      object: [{}, { a: 'b' }],
      null: [null],
    }
    return fc.constantFrom(...Object.entries(all).flatMap(([type, values]) => (types.includes(type) ? [] : values)))
  }
  if (schema.anyOf) {
    const options = schema.anyOf.filter((option) => option.type !== 'null')
    const types = schema.anyOf.map((option) => option.type ?? '')
    const consts = options.map((option) => option.const).filter((value): value is string => typeof value === 'string')
    const arbs: fc.Arbitrary<Json>[] = [wrongType(...types), ...options.map((option) => invalidValue(option, field))]
    if (consts.length) arbs.push(fc.constantFrom(...consts.map((c) => c.toUpperCase()), ...consts.map((c) => ` ${c}`), 'other'))
    return fc.oneof(...arbs)
  }
  if (schema.const !== undefined || schema.enum) return fc.oneof(wrongType(schema.type ?? ''), fc.constantFrom('OTHER', '', 'x'))
  const nullable = isNullable(schema)
  switch (schema.type) {
    case 'string': {
      const arbs: fc.Arbitrary<Json>[] = [wrongType('string', ...(nullable ? ['null'] : [])), loneSurrogates]
      const tooLong = (schema.maxLength ?? 10_000) + 1
      arbs.push(fc.constantFrom('x'.repeat(tooLong), '😀'.repeat(Math.ceil(tooLong / 2)), 'x'.repeat(100_000)))
      if ((schema.minLength ?? 0) > 0) arbs.push(fc.constantFrom('', ' ', '\t\n', '\u3000'))
      if (schema.pattern?.startsWith('^') && !isTextRule(schema.pattern)) arbs.push(fc.constantFrom('eur', 'E', 'EURO1234567', 'EU R', '€', 'ＥＵＲ'))
      if (schema.format === 'date') arbs.push(badDate)
      if (schema.format === 'time') arbs.push(badTime)
      return fc.oneof(...arbs)
    }
    case 'number':
    case 'integer': {
      const arbs: fc.Arbitrary<Json>[] = [wrongType('number'), fc.constantFrom(...HUGE_NUMBERS).map((text) => new Num(text))]
      if (schema.type === 'integer') arbs.push(fc.constantFrom('1.5', '0.1', '1e-1').map((text) => new Num(text)))
      if (schema.minimum !== undefined) arbs.push(fc.constant(new Num(String(schema.minimum - 1))))
      if (schema.maximum !== undefined) arbs.push(fc.constant(new Num(String(schema.maximum + 1))))
      if (schema.exclusiveMinimum !== undefined) arbs.push(fc.constantFrom('0', '-0', '-0.00000001', '-5').map((text) => new Num(text)))
      return fc.oneof(...arbs)
    }
    case 'boolean':
      return fc.oneof(wrongType('boolean'), fc.constantFrom('true', 'false', new Num('1'), new Num('0')))
    case 'array': {
      const arbs: fc.Arbitrary<Json>[] = [wrongType('array')]
      if (schema.items) {
        const item = schema.items
        arbs.push(invalidValue(item, field).map((bad) => [bad]))
        if (schema.maxItems !== undefined) {
          const count = schema.maxItems + 1
          arbs.push(validValue(item, field, {}).map((good) => Array.from({ length: count }, () => good)))
        }
      }
      return fc.oneof(...arbs)
    }
    case 'object': {
      const arbs: fc.Arbitrary<Json>[] = [wrongType('object')]
      if (schema.properties) arbs.push(mutatedObject(schema, {}).map((m) => m.value))
      return fc.oneof(...arbs)
    }
    default:
      return wrongType()
  }
}

/** Keys a body must not have: server-owned fields, prototype names, case and space variants, odd text. */
export const unknownKey = fc.oneof(
  fc.constantFrom(
    'id',
    'createdAt',
    'updatedAt',
    'isArchived',
    'isSystem',
    'transactionCount',
    '__proto__',
    'constructor',
    'toString',
    '',
    'Name',
    'name ',
    'ámount',
    'hasSplits',
    'splitMode',
  ),
  anyText(12),
)

export type Mutation = 'wrongValue' | 'extraField' | 'missingField' | 'nullField'

/** A valid object with exactly one thing wrong: a field's value, an extra field, a missing required field, or a null. */
export function mutatedObject(schema: JsonSchema, pools: Pools): fc.Arbitrary<{ mutation: Mutation; field: string; value: Json }> {
  const properties = schema.properties ?? {}
  const names = Object.keys(properties)
  const required = schema.required ?? []
  const base = validObject(schema, pools)
  const options: fc.Arbitrary<{ mutation: Mutation; field: string; value: Json }>[] = [
    fc
      .tuple(base, unknownKey, anyJson)
      .filter(([, key]) => !names.includes(key))
      .map(([value, key, extra]) => ({ mutation: 'extraField' as const, field: key, value: Object.fromEntries([...Object.entries(value), [key, extra]]) })),
  ]
  if (names.length) {
    options.push(
      fc
        .tuple(base, fc.constantFrom(...names))
        .chain(([value, name]) =>
          invalidValue(properties[name] ?? {}, name).map((bad) => ({ mutation: 'wrongValue' as const, field: name, value: { ...value, [name]: bad } })),
        ),
    )
    const notNullable = names.filter((name) => !isNullable(properties[name] ?? {}))
    if (notNullable.length) {
      options.push(
        fc
          .tuple(base, fc.constantFrom(...notNullable))
          .map(([value, name]) => ({ mutation: 'nullField' as const, field: name, value: { ...value, [name]: null } })),
      )
    }
  }
  if (required.length) {
    options.push(
      fc.tuple(base, fc.constantFrom(...required)).map(([value, name]) => {
        const { [name]: _dropped, ...rest } = value
        return { mutation: 'missingField' as const, field: name, value: rest }
      }),
    )
  }
  return fc.oneof(...options)
}

/** The same JSON with keys in another order and numbers spelled differently but equal (1.5 → 1.50, 2 → 2.0e0). */
export function respelled(value: Json): Json {
  if (value instanceof Num) {
    const text = value.text
    if (/^-?\d+$/.test(text)) return new Num(`${text}.0e0`)
    if (/^-?\d+\.\d+$/.test(text)) return new Num(`${text}0`)
    return value
  }
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map(respelled)
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, item]) => [key, respelled(item)]),
  )
}
