/**
 * JSON decoding that remembers each number's source text, so money can be read exactly
 * (a double cannot hold 92233720368.54775807) and request fingerprints see what was sent.
 */
declare global {
  interface JSON {
    rawJSON(text: string): unknown
  }
}

type ReviverContext = { source?: string }
const numberSources = new WeakMap<object, Map<string, string>>()

export function decodeJson(text: string): unknown {
  return JSON.parse(text, function (this: object, key: string, value: unknown, context?: ReviverContext) {
    if (typeof value === 'number' && context?.source !== undefined) {
      let sources = numberSources.get(this)
      if (!sources) numberSources.set(this, (sources = new Map()))
      sources.set(key, context.source)
    }
    return value
  } as (key: string, value: unknown) => unknown)
}

/** The text a number was written as in the request, or its shortest form when it was not decoded here. */
export function numberSource(holder: object, key: string): string {
  const value = (holder as Record<string, unknown>)[key]
  return numberSources.get(holder)?.get(key) ?? String(value)
}

const LEXEME = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/

/** A number lexeme as an exact coefficient and power of ten, with trailing zeros removed. */
export function parseDecimalLexeme(text: string): { negative: boolean; coefficient: bigint; exponent: number } | null {
  const m = LEXEME.exec(text)
  if (!m) return null
  const [, sign, intPart = '', fraction = '', exp = '0'] = m
  let coefficient = BigInt(intPart + fraction)
  let exponent = Number(exp) - fraction.length
  if (!Number.isSafeInteger(exponent)) return null
  if (coefficient === 0n) return { negative: false, coefficient, exponent: 0 }
  while (coefficient % 10n === 0n) {
    coefficient /= 10n
    exponent += 1
  }
  return { negative: sign === '-', coefficient, exponent }
}

/**
 * Canonical JSON text: keys sorted, numbers in one exact normal form.
 * Equal requests give equal text whatever their key order or number spelling.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number') return canonicalNumber(String(value))
    return JSON.stringify(value) ?? 'null'
  }
  if (Array.isArray(value)) {
    return `[${value.map((item, index) => (typeof item === 'number' ? canonicalNumber(numberSource(value, String(index))) : canonicalJson(item))).join(',')}]`
  }
  const record = value as Record<string, unknown>
  const parts = Object.keys(record)
    .sort()
    .map((key) => {
      const item = record[key]
      const text = typeof item === 'number' ? canonicalNumber(numberSource(record, key)) : canonicalJson(item)
      return `${JSON.stringify(key)}:${text}`
    })
  return `{${parts.join(',')}}`
}

function canonicalNumber(lexeme: string): string {
  const d = parseDecimalLexeme(lexeme)
  return d ? `${d.negative ? '-' : ''}${d.coefficient}e${d.exponent}` : lexeme
}
