import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server'
import type { TSchema } from '@sinclair/typebox'

/**
 * A route's TypeBox schema as the Standard Schema the MCP SDK takes for a tool's input or
 * output: its JSON Schema is what `tools/list` shows, derived from the same schema the REST
 * route uses. Validation passes everything through on purpose: the REST route checks the
 * arguments itself, so a tool refuses exactly what the route refuses, with the same error; and
 * the output is the route's own response, which its schema already describes.
 */
export function toolSchema(schema: TSchema, options: { bare?: boolean } = {}): StandardSchemaWithJSON<Record<string, unknown>> {
  // JSON round trip: TypeBox's own markers are symbols and drop out; what remains is JSON Schema.
  const json = JSON.parse(JSON.stringify(schema), options.bare ? withoutProse : undefined) as Record<string, unknown>
  return {
    '~standard': {
      version: 1,
      vendor: 'pfin',
      validate: (value: unknown) => ({ value: (value ?? {}) as Record<string, unknown> }),
      jsonSchema: { input: () => json, output: () => json },
    },
  }
}

/**
 * Output schemas go without their prose (descriptions, examples, titles): every tool's output
 * repeats the resources' schemas, and `tools/list` is read by the agent whole. What a field
 * means is in the tool's description and in /openapi.json; the shape stays complete. (A field
 * named `title` or `description` is a schema, an object: it stays.)
 */
function withoutProse(key: string, value: unknown): unknown {
  if ((key === 'description' || key === 'title') && typeof value === 'string') return undefined
  if (key === 'examples' && Array.isArray(value)) return undefined
  return value
}
