/**
 * Exact money: pfin writes money as JSON numbers with up to 8 decimals and 11 integer digits
 * (e.g. 92233720367.99999999), more than a double holds. With `exactDecimals` the client
 * reads these fields as decimal strings, exactly as the server wrote them, and lets you send
 * them as strings, which go into the body as bare JSON numbers, digit for digit.
 */

/** The JSON keys that hold money or a rate, at any depth of a body. */
export const MONEY_FIELDS = [
  'amount',
  'balance',
  'destinationAmount',
  'totalSpent',
  'exchangeRate',
  // Budgets (CONTRACT §27).
  'planned',
  'spent',
  'remaining',
  'plannedExpense',
  'spentExpense',
  'plannedIncome',
  'receivedIncome',
] as const
export type MoneyField = (typeof MONEY_FIELDS)[number]

const MONEY = new Set<string>(MONEY_FIELDS)

/** A JSON number as text: what a string may hold to be sent as a money value. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/

/**
 * Each string token of a JSON text, and the number right after it when the token is an object
 * key. Strings are matched whole from their opening quote and nothing outside a string holds
 * a quote, so every match starts at a real token (one linear pass).
 */
const KEY_AND_NUMBER = /"([^"\\]*(?:\\.[^"\\]*)*)"(?:(\s*:\s*)(-?\d[\d.eE+-]*))?/g

/**
 * The JSON text with every number under a money key turned into a string of its exact source
 * text (`"balance":12.50` → `"balance":"12.50"`); everything else is left as it is. Works in
 * every runtime (it does not need `JSON.parse`'s source-text reviver argument).
 */
export function quoteMoneyNumbers(text: string): string {
  return text.replace(KEY_AND_NUMBER, (match, key: string, colon: string | undefined, number: string | undefined) =>
    number !== undefined && MONEY.has(key) ? `"${key}"${colon}"${number}"` : match,
  )
}

/** JSON.parse, with money fields (MONEY_FIELDS, any depth) as their exact decimal strings. */
export function parseExact(text: string): unknown {
  return JSON.parse(quoteMoneyNumbers(text))
}

/**
 * JSON.stringify, except that a string under a money key is written as a bare JSON number
 * with exactly its digits (`{amount: '0.10'}` → `{"amount":0.10}`), never through a double.
 * Such a string must be a JSON number (`-12.5`, `92233720367.99999999`); anything else is a
 * TypeError before anything is sent. Numbers are written as JSON.stringify writes them.
 */
export function stringifyExact(value: unknown): string {
  const text = write(value, undefined, new Set())
  if (text === undefined) throw new TypeError('stringifyExact: the value has no JSON form')
  return text
}

function write(value: unknown, key: string | undefined, seen: Set<object>): string | undefined {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: (key: string) => unknown }).toJSON(key ?? '')
  }
  if (typeof value === 'string' && key !== undefined && MONEY.has(key)) {
    if (!JSON_NUMBER.test(value)) throw new TypeError(`${key}: ${JSON.stringify(value)} is not a decimal number`)
    return value
  }
  if (typeof value === 'bigint' && key !== undefined && MONEY.has(key)) return value.toString()
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  if (seen.has(value)) throw new TypeError('stringifyExact: circular structure')
  seen.add(value)
  let out: string
  if (Array.isArray(value)) {
    out = `[${value.map((item, i) => write(item, String(i), seen) ?? 'null').join(',')}]`
  } else {
    const parts: string[] = []
    for (const [k, v] of Object.entries(value)) {
      const text = write(v, k, seen)
      if (text !== undefined) parts.push(`${JSON.stringify(k)}:${text}`)
    }
    out = `{${parts.join(',')}}`
  }
  seen.delete(value)
  return out
}
