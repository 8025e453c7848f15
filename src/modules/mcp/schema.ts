import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server'
import type { TSchema } from '@sinclair/typebox'

/**
 * A route's TypeBox schema as the Standard Schema the MCP SDK takes for a tool's input: its
 * JSON Schema is what `tools/list` shows, derived from the same schema the REST route uses.
 * Validation passes everything through on purpose: the REST route checks the arguments itself,
 * so a tool refuses exactly what the route refuses, with the same error.
 */
export function toolInput(schema: TSchema): StandardSchemaWithJSON<Record<string, unknown>> {
  // JSON round trip: TypeBox's own markers are symbols and drop out; what remains is JSON Schema.
  const json = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>
  return {
    '~standard': {
      version: 1,
      vendor: 'pfin',
      validate: (value: unknown) => ({ value: (value ?? {}) as Record<string, unknown> }),
      jsonSchema: { input: () => json, output: () => json },
    },
  }
}
