import type { RawFile } from '../../platform/body.ts'
import { defineRoute } from '../../platform/route.ts'
import { MAX_FILE_BYTES, MAX_JSON_BODY_BYTES } from './limits.ts'
import { ImportJsonBody, type ImportJsonBodyInput, ImportParams, ImportQuery, ImportResponse } from './model.ts'
import { type PreparedImport, prepareImport, readImport, runImport } from './service.ts'

/** `POST /v1/accounts/{accountId}/imports` (CONTRACT §24). */

const FILE_BODY =
  'send the statement file itself as the body, with any Content-Type but JSON (curl --data-binary @statement.ofx), and the options in the query; or the JSON form {content | contentBase64, …options}'

export const importRoutes = [
  defineRoute({
    method: 'POST',
    path: '/v1/accounts/:accountId/imports',
    operationId: 'importStatement',
    summary: 'Import a bank statement file (CSV, OFX/QFX, QIF, camt.053) into an account',
    description:
      'The body is the file itself (any media type but JSON; up to 4 MiB and 5,000 rows), with the options in the query; or the JSON form with the file as `content` or `contentBase64` and the options beside it. ' +
      'Every row becomes a transaction upsert with an externalId made from the bank’s own id (or its date, amount and place in the file), so importing a file again, or an overlapping one, changes nothing twice. ' +
      'The rows are applied together or not at all: a row that fails refuses the import with `line N: field: …`. `dryRun=true` reports every row, with all of its errors, and writes nothing. ' +
      'Each row reports `created`, `updated`, `unchanged`, `skipped_deleted` (its transaction was deleted; `ifDeleted=recreate` creates it again) or `duplicate_in_file`. `statement` compares the statement’s closing balance with the account’s balance after the import; it is never applied.',
    tag: 'Imports',
    scopes: ['transactions:write'],
    params: ImportParams,
    query: ImportQuery,
    body: ImportJsonBody,
    fileBody: { maxBytes: MAX_FILE_BYTES, description: FILE_BODY },
    maxBodyBytes: MAX_JSON_BODY_BYTES,
    response: ImportResponse,
    statuses: [200],
    errors: ['not_found', 'invalid_reference', 'rule_violation', 'limit_reached'],
    requestExample: { content: 'Date,Description,Amount\n2026-01-15,Coffee,-3.20\n', dryRun: true },
    // The file is read in a worker before the write is queued (CONTRACT §14); the rows are applied in the handler.
    prepare: ({ tenant, query, body }) => prepareImport(tenant, body as unknown as RawFile | ImportJsonBodyInput, query),
    handle: ({ tenant, auth, params, query, body, prepared }) => {
      if (prepared instanceof Error) throw prepared
      const ready = (prepared as PreparedImport | undefined) ?? readImport(tenant, body as unknown as RawFile | ImportJsonBodyInput, query)
      return { status: 200, body: { data: runImport(tenant, auth.subject.country, params.accountId, ready) } }
    },
  }),
]
