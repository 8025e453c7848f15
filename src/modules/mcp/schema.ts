import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server'
import type { TSchema } from '@sinclair/typebox'

/**
 * A route's TypeBox schema as the Standard Schema the MCP SDK takes for a tool's input or
 * output: its JSON Schema is what `tools/list` shows, derived from the same schema the REST
 * route uses. Validation passes everything through on purpose: the REST route checks the
 * arguments itself, so a tool refuses exactly what the route refuses, with the same error; and
 * the output is the route's own response, which its schema already describes.
 */
export function toolSchema(schema: TSchema, use: 'input' | 'output'): StandardSchemaWithJSON<Record<string, unknown>> {
  // JSON round trip: TypeBox's own markers are symbols and drop out; what remains is JSON Schema.
  const json = compact(JSON.parse(JSON.stringify(schema)), use === 'output') as Record<string, unknown>
  return {
    '~standard': {
      version: 1,
      vendor: 'pfin',
      validate: (value: unknown) => ({ value: (value ?? {}) as Record<string, unknown> }),
      jsonSchema: { input: () => json, output: () => json },
    },
  }
}

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)
/** Keywords that describe, not constrain. */
const PROSE = new Set(['description', 'title', 'examples'])
/** Keywords that constrain one scalar type only: a nullable member with just these takes `null` into its `type`. */
const SCALAR_KEYWORDS = new Set(['type', 'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'])

/**
 * A tool's schema in its shortest equivalent form: `tools/list` is read by the agent whole, and
 * every tool repeats the resources' schemas, so this is most of what a connection costs.
 * - A union of string constants (and null) is one `enum`; `anyOf: [{type: X, …}, {type: "null"}]`
 *   of a scalar is `type: [X, "null"]` with X's bounds (they apply to X only).
 * - Prose stays where an agent reads it, on each argument; the members of a union lose theirs
 *   (the argument's own says it). Output schemas go without any (what a field means is in the
 *   tool's description and /openapi.json) and without `additionalProperties: false`: an answer
 *   may carry fields a later version adds, which a client ignores (CONTRACT §20).
 * Property names are never touched: a field called `title` or `description` is a schema.
 */
function compact(schema: unknown, output: boolean, inUnion = false): unknown {
  if (Array.isArray(schema)) return schema.map((item) => compact(item, output))
  if (!isObject(schema)) return schema
  const out: Json = {}
  for (const [key, value] of Object.entries(schema)) {
    if (PROSE.has(key) && (output || inUnion)) continue
    if (output && key === 'additionalProperties' && value === false) continue
    if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, compact(property, output)]))
    } else if (key === 'anyOf' && Array.isArray(value)) {
      out.anyOf = value.map((member) => compact(member, output, true))
    } else out[key] = compact(value, output)
  }
  const members = out.anyOf
  if (!Array.isArray(members)) return out
  const { anyOf: _, ...rest } = out
  const isNull = (member: unknown) => isObject(member) && member.type === 'null' && Object.keys(member).length === 1
  // A union of string constants (and null): one enum.
  if (
    members.every(
      (member) => isNull(member) || (isObject(member) && typeof member.const === 'string' && Object.keys(member).every((k) => k === 'const' || k === 'type')),
    )
  ) {
    const values = members.map((member) => (isNull(member) ? null : (member as Json).const))
    return { ...rest, type: values.includes(null) ? ['string', 'null'] : 'string', enum: values }
  }
  // A nullable scalar: one `type` list, its bounds kept; a nullable enum takes null into its values.
  if (members.length === 2 && members.some(isNull)) {
    const other = members.find((member) => !isNull(member)) as Json
    if (isObject(other) && typeof other.type === 'string') {
      if (Array.isArray(other.enum)) return { ...rest, ...other, type: [other.type, 'null'], enum: [...other.enum, null] }
      if (Object.keys(other).every((k) => SCALAR_KEYWORDS.has(k))) return { ...rest, ...other, type: [other.type, 'null'] }
    }
  }
  return out
}
