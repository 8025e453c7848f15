import type { Tenant } from '../../db/tenant/tenant.ts'
import { defineRoute } from '../../platform/route.ts'
import {
  ImportPresetCreate,
  ImportPresetListQuery,
  ImportPresetListResponse,
  ImportPresetParams,
  ImportPresetResponse,
  ImportPresetUpdate,
} from './preset-model.ts'
import { toPreset } from './preset-queries.ts'
import { createPreset, deletePreset, getPreset, listPresets, updatePreset } from './presets.ts'

const current = ({ tenant, params }: { tenant: Tenant; params: { presetId: string } }) => toPreset(getPreset(tenant, params.presetId))

/** Import presets take the transaction scopes: they are how transactions are read from files (CONTRACT §24). */
const tag = 'Imports'
const example = {
  name: 'ING NL current account',
  delimiter: ',',
  dateFormat: 'YYYYMMDD',
  decimalSeparator: ',',
  columns: { date: 'Datum', amount: 'Bedrag (EUR)', indicator: 'Af Bij', payee: 'Naam / Omschrijving', description: 'Mededelingen' },
}

export const presetRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/import-presets',
    operationId: 'listImportPresets',
    summary: 'List import presets (oldest first)',
    tag,
    scopes: ['transactions:read'],
    query: ImportPresetListQuery,
    response: ImportPresetListResponse,
    statuses: [200],
    errors: ['validation_failed'],
    handle: ({ tenant, query }) => ({ status: 200, body: listPresets(tenant, query) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/import-presets',
    operationId: 'createImportPreset',
    summary: 'Save how to read a bank’s CSV export',
    description:
      'Columns are named by header (compared without case, accents and punctuation) or by position. The amount is `amount` (signed), `amount` with `indicator` (a debit/credit marker), or `outflow` with `inflow`. Null fields are detected from each file.',
    tag,
    scopes: ['transactions:write'],
    body: ImportPresetCreate,
    response: ImportPresetResponse,
    statuses: [201],
    errors: ['rule_violation'],
    requestExample: example,
    etag: true,
    handle: ({ tenant, body }) => {
      const row = createPreset(tenant, body)
      return { status: 201, body: { data: toPreset(row) }, location: `/v1/import-presets/${row.id}` }
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/import-presets/:presetId',
    operationId: 'getImportPreset',
    summary: 'Get an import preset',
    tag,
    scopes: ['transactions:read'],
    params: ImportPresetParams,
    response: ImportPresetResponse,
    statuses: [200],
    errors: ['not_found'],
    etag: true,
    handle: ({ tenant, params }) => ({ status: 200, body: { data: toPreset(getPreset(tenant, params.presetId)) } }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/import-presets/:presetId',
    operationId: 'updateImportPreset',
    summary: 'Change an import preset',
    description: 'Fields not sent keep their values; `columns` is replaced whole; null sets a field back to "detect".',
    tag,
    scopes: ['transactions:write'],
    params: ImportPresetParams,
    body: ImportPresetUpdate,
    response: ImportPresetResponse,
    statuses: [200],
    errors: ['not_found', 'rule_violation'],
    requestExample: { skipRows: 3 },
    current,
    handle: ({ tenant, params, body }) => ({ status: 200, body: { data: toPreset(updatePreset(tenant, params.presetId, body)) } }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/import-presets/:presetId',
    operationId: 'deleteImportPreset',
    summary: 'Delete an import preset',
    description: 'Returns the preset as it was. Transactions imported with it are not touched.',
    tag,
    scopes: ['transactions:write'],
    params: ImportPresetParams,
    response: ImportPresetResponse,
    statuses: [200],
    errors: ['not_found'],
    current,
    handle: ({ tenant, params }) => ({ status: 200, body: { data: toPreset(deletePreset(tenant, params.presetId)) } }),
  }),
]
