import { FormatRegistry, type TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import 'elysia'
import { ApiError } from './errors.ts'
import { addSchemaIssues, Issues, shownName } from './issues.ts'
import { closest } from './nearest.ts'
import { CLOCK_TIME_PATTERN } from './schemas.ts'

/**
 * Request validation: one compiled TypeBox check per schema, and a `detail` that names the
 * field and says what it must be.
 */

// Elysia registers lenient `date`/`time` formats on import; the contract wants exact ones.
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
export function isCalendarDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)
  if (!m) return false
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
  const max = month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0)
  return month >= 1 && month <= 12 && day >= 1 && day <= max
}
const CLOCK_TIME = new RegExp(CLOCK_TIME_PATTERN)
export const isClockTime = (value: string) => CLOCK_TIME.test(value)
FormatRegistry.Set('date', isCalendarDate)
FormatRegistry.Set('time', isClockTime)

/**
 * String lengths count characters (Unicode code points), as JSON Schema's `minLength` and
 * `maxLength` do in the document and in clients generated from it; TypeBox counts UTF-16 code
 * units, so "😀" would count twice. Each length-limited string is checked through a format of
 * its own instead (`chars:MIN:MAX`), its limits kept as `minChars`/`maxChars` for the message.
 */
function countsCharacters(min: number, max: number): string {
  const name = `chars:${min}:${max}`
  if (!FormatRegistry.Has(name)) {
    FormatRegistry.Set(name, (value) => {
      if (value.length === 0) return min === 0
      // A non-empty string holds at least one character and at most as many as its code units.
      if (min <= 1 && value.length <= max) return true
      const length = codePoints(value)
      return length >= min && length <= max
    })
  }
  return name
}

/** Characters of a string: its code units less one per surrogate pair. */
function codePoints(value: string): number {
  let pairs = 0
  for (let i = 0; i < value.length - 1; i++) {
    const unit = value.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs++
        i++
      }
    }
  }
  return value.length - pairs
}

/** The schema as the server checks it: the same, with string lengths counted in characters (above). */
function checkedAs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(checkedAs)
  if (schema === null || typeof schema !== 'object') return schema
  const node = schema as Record<string | symbol, unknown>
  const copy: Record<string | symbol, unknown> = {}
  for (const key of Object.getOwnPropertyNames(node)) copy[key] = checkedAs(node[key])
  for (const key of Object.getOwnPropertySymbols(node)) copy[key] = node[key]
  if (copy.type === 'string' && copy.format === undefined && (copy.minLength !== undefined || copy.maxLength !== undefined)) {
    const { minLength, maxLength } = copy as { minLength?: number; maxLength?: number }
    delete copy.minLength
    delete copy.maxLength
    Object.assign(copy, { format: countsCharacters(minLength ?? 0, maxLength ?? Number.MAX_SAFE_INTEGER), minChars: minLength, maxChars: maxLength })
  }
  return copy
}

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>()

export function compile<T extends TSchema>(schema: T): TypeCheck<T> {
  let check = compiled.get(schema)
  if (!check) {
    check = TypeCompiler.Compile(checkedAs(schema) as TSchema)
    compiled.set(schema, check)
  }
  return check as TypeCheck<T>
}

/**
 * Query strings carry text; turn the values whose schema wants a number or a boolean into
 * one (when they spell one), leaving everything else for the schema check to reject. A
 * parameter given twice is refused rather than one of its values picked silently.
 */
export function coerceQuery(schema: TSchema, params: URLSearchParams): Record<string, unknown> {
  const properties = ((schema as { properties?: Record<string, TSchema> }).properties ?? {}) as Record<string, { type?: string }>
  const out: Record<string, unknown> = {}
  for (const [name, value] of params) {
    if (Object.hasOwn(out, name)) {
      throw new ApiError('validation_failed', `Query parameter '${name.slice(0, 64).toWellFormed()}' is given more than once; send it once`)
    }
    const type = Object.hasOwn(properties, name) ? properties[name]?.type : undefined
    let typed: unknown = value
    if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) typed = Number(value)
    else if (type === 'boolean' && (value === 'true' || value === 'false')) typed = value === 'true'
    // `?__proto__=1` must stay a parameter (and be refused as unknown), not set the object's prototype.
    if (name === '__proto__') Object.defineProperty(out, name, { value: typed, enumerable: true, writable: true, configurable: true })
    else out[name] = typed
  }
  return out
}

/** What is checked: a body's fields, a query's parameters, or an MCP tool's arguments. */
export type Checked = 'body' | 'query' | 'arguments'

const LABEL: Record<Checked, string> = { body: 'field', query: 'query parameter', arguments: 'argument' }
const NOT_AN_OBJECT: Record<Checked, string> = {
  body: 'the request body must be a JSON object',
  query: 'the query string is invalid',
  arguments: 'the arguments must be a JSON object',
}

/**
 * Adds every problem of `value` against `schema` to `issues`, each told as `describe` tells it;
 * false when there was one. A value the check refuses always adds one, named or not.
 */
export function addIssues(issues: Issues, schema: TSchema, value: unknown, describe: (error: ValueError) => string, unnamed: string): boolean {
  const check = compile(schema)
  if (check.Check(value)) return true
  if (issues.full) {
    issues.overflow()
    return false
  }
  const before = issues.count
  addSchemaIssues(issues, check.Errors(value), describe)
  if (issues.count === before) issues.add('invalid', () => unnamed)
  return false
}

/** Throws 422 `validation_failed` naming every offending field (CONTRACT §6). */
export function assertValid<T extends TSchema>(schema: T, value: unknown, where: Checked): void {
  const issues = new Issues()
  if (!addIssues(issues, schema, value, (error) => describeError(error, where, value), `The request ${where} is invalid`)) {
    throw new ApiError('validation_failed', issues.detail())
  }
}

/** JSON pointer `/customFields/0/label` → its unescaped parts. */
const pointerParts = (path: string) =>
  path
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object'

/** `/customFields/0/label` → `customFields[0].label`; a client's name is shown clipped and well-formed. */
export function fieldName(path: string, root?: unknown): string {
  let holder = root
  return pointerParts(path).reduce((name, part) => {
    // An index only inside an array: an object key may be all digits too (`{"0": …}`).
    const isIndex = root === undefined ? /^\d+$/.test(part) : Array.isArray(holder)
    holder = isObject(holder) ? holder[part] : undefined
    const shown = shownName(part)
    return isIndex ? `${name}[${shown}]` : name ? `${name}.${shown}` : shown
  }, '')
}

/** `['customFields', 0, 'label']` → `customFields[0].label` */
export function fieldPath(path: readonly (string | number)[]): string {
  return path.reduce<string>((name, part) => (typeof part === 'number' ? `${name}[${part}]` : name ? `${name}.${shownName(part)}` : shownName(part)), '')
}

/**
 * ` (did you mean 'amount'?)` for an unknown field near one of its object's fields, if any.
 * A field the object already holds is no suggestion: renaming into it would send it twice.
 */
function suggestion(error: ValueError, root: unknown): string {
  const parts = pointerParts(error.path)
  const name = parts.pop() ?? ''
  const holder = parts.reduce<unknown>((value, part) => (isObject(value) ? value[part] : undefined), root)
  const fields = Object.keys((error.schema as { properties?: object }).properties ?? {})
  const near = closest(
    name,
    fields.filter((field) => !(isObject(holder) && Object.hasOwn(holder, field))),
  )
  return near === undefined ? '' : ` (did you mean '${near}'?)`
}

/**
 * The field an error is about (null: the value itself) and what is wrong with it, in words.
 * `suggest: false` leaves out the "did you mean", for callers that tell more errors than they show.
 */
export function fieldProblem(error: ValueError, root?: unknown, suggest = true): { field: string | null; detail: string } {
  const field = fieldName(error.path, root) || null
  if (error.type === ValueErrorType.ObjectAdditionalProperties) return { field, detail: `is not allowed${suggest ? suggestion(error, root) : ''}` }
  if (error.type === ValueErrorType.ObjectRequiredProperty) return { field, detail: 'is required' }
  if (field === null) return { field, detail: 'must be a JSON object' }
  return { field, detail: expectation(error.schema) }
}

export function describeError(error: ValueError, where: Checked, root?: unknown): string {
  const { field, detail } = fieldProblem(error, root)
  if (field !== null) return `${LABEL[where]} '${field}' ${detail}`
  if (error.type === ValueErrorType.ObjectAdditionalProperties) return `unknown ${LABEL[where]}`
  return NOT_AN_OBJECT[where]
}

/** What a value of this schema must look like, in words. */
export function expectation(schema: TSchema): string {
  const s = schema as Record<string, unknown> & { anyOf?: TSchema[] }
  if (s.anyOf) {
    const options = s.anyOf.filter((option) => (option as { type?: string }).type !== 'null')
    const nullable = options.length < s.anyOf.length
    const literals = options.map((option) => (option as { const?: unknown }).const)
    const base =
      options.length === 1
        ? expectation(options[0] as TSchema)
        : literals.every((value) => value !== undefined)
          ? `must be one of: ${literals.join(', ')}`
          : 'has an invalid value'
    return nullable ? `${base} (or null)` : base
  }
  if (Array.isArray(s.enum)) return `must be one of: ${(s.enum as unknown[]).join(', ')}`
  if (s.const !== undefined) return `must be ${JSON.stringify(s.const)}`
  switch (s.type) {
    case 'string': {
      if (s.format === 'date') return 'must be a calendar date (YYYY-MM-DD)'
      if (s.format === 'time') return 'must be a time of day (HH:MM or HH:MM:SS)'
      if (typeof s.description === 'string' && typeof s.pattern === 'string') return `must be ${s.description}`
      const min = (s.minLength ?? s.minChars) as number | undefined
      const max = (s.maxLength ?? s.maxChars) as number | undefined
      if (s.pattern) return `must match ${s.pattern}`
      if (min !== undefined && max !== undefined) return `must be a string of ${min} to ${max} characters`
      if (max !== undefined) return `must be a string of at most ${max} characters`
      return 'must be a string'
    }
    case 'integer':
    case 'number': {
      const kind = s.type === 'integer' ? 'an integer' : 'a number'
      const min = s.minimum as number | undefined
      const max = s.maximum as number | undefined
      if (min !== undefined && max !== undefined) return `must be ${kind} from ${min} to ${max}`
      if (s.exclusiveMinimum !== undefined) return `must be ${kind} greater than ${s.exclusiveMinimum}`
      return `must be ${kind}`
    }
    case 'boolean':
      return 'must be true or false'
    case 'array': {
      const min = s.minItems as number | undefined
      const max = s.maxItems as number | undefined
      if (min !== undefined && min > 0 && max !== undefined) return `must be an array of ${min} to ${max} items`
      return max !== undefined ? `must be an array of at most ${max} items` : 'must be an array'
    }
    case 'object':
      return 'must be an object'
    default:
      return 'has an invalid value'
  }
}
