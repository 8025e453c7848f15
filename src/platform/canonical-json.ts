import { decimalNormalForm } from './decimal.ts'
import { type Sources, sourceAt, sourcesOf } from './number-sources.ts'

/**
 * Canonical JSON text, for request fingerprints (CONTRACT §8): keys sorted, numbers in one
 * exact normal form. Equal requests give equal text whatever their key order or number
 * spelling; a number is read from the text it was sent as, so two amounts one double apart
 * are never taken for one.
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
  const source = sourceAt(sources, key)
  return source === undefined ? canonicalValue(value) : canonicalNumber(source)
}

const ZERO = 0x30

/** The canonical form of a number whose text was not kept (a short integer, or a value not decoded here). */
function canonicalValue(value: number): string {
  if (!Number.isSafeInteger(value)) return canonicalNumber(String(value))
  if (value === 0) return '0e0'
  // Trailing zeros become the exponent, as decimalNormalForm does.
  const text = String(value)
  let end = text.length
  while (text.charCodeAt(end - 1) === ZERO) end--
  return `${text.slice(0, end)}e${text.length - end}`
}

/** A lexeme decimalNormalForm cannot read stands for itself. */
const canonicalNumber = (lexeme: string): string => decimalNormalForm(lexeme) ?? lexeme
