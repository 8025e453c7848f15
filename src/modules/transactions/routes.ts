import type { Tenant } from '../../db/tenant/tenant.ts'
import { defineRoute, upsertReply } from '../../platform/route.ts'
import {
  TransactionCreate,
  TransactionCreateResponse,
  TransactionListQuery,
  TransactionListResponse,
  TransactionParams,
  TransactionResponse,
  TransactionUpdate,
  TransactionUpsert,
  TransactionUpsertResponse,
} from './model.ts'
import { checkBatchBody, importTransactions } from './batch.ts'
import { MAX_BATCH_BODY_BYTES, TransactionBatch, TransactionBatchResponse } from './batch-model.ts'
import { toTransaction } from './queries.ts'
import { listTransactionPage } from './list.ts'
import { deleteTransaction, getTransactionView, recordTransaction, updateTransaction, upsertTransaction, viewOf } from './service.ts'

const tag = 'Transactions'
const WRITE_ERRORS = ['invalid_reference', 'rule_violation', 'limit_reached'] as const
const RULES_NOTE =
  '`applyRules: true` runs your active rules (CONTRACT §23) first: they fill in the fields the request leaves out, never one it sends, and `rulesApplied` lists the rules that matched.'
const example = { accountId: 'acct_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b', amount: 12.9, date: '2026-11-21', payeeName: 'Pingo Doce', note: 'groceries' }

/** The resource as GET shows it (404 when absent): what an If-Match is checked against. */
const current = ({ tenant, params }: { tenant: Tenant; params: { transactionId: string } }) => toTransaction(getTransactionView(tenant, params.transactionId))

export const transactionRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/transactions',
    operationId: 'listTransactions',
    summary: 'List transactions, newest first',
    description:
      '`accountId` matches the source account and the destination of transfers; `categoryId` and `payeeId` match the transaction’s own or one of its legs’; `tagId` the transactions carrying that tag; `from`/`to` are inclusive dates. Filters combine; each page walks an index, so it costs the same at any size.',
    tag,
    scopes: ['transactions:read'],
    query: TransactionListQuery,
    response: TransactionListResponse,
    statuses: [200],
    errors: ['validation_failed'],
    handle: ({ tenant, query }) => ({ status: 200, body: listTransactionPage(tenant, query) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/transactions',
    operationId: 'createTransaction',
    summary: 'Record a transaction (updates balances and payee totals)',
    description:
      'Positive amounts are expenses, negative amounts income. A transfer sets `isTransfer: true` and `transferToAccountId`; the destination receives `destinationAmount`, or `amount × exchangeRate`, or `amount` between accounts of one currency. ' +
      '`splits` divides the transaction into 2–100 legs whose amounts sum exactly to `amount` (then it has no `categoryId` of its own); `tagIds` or `tagNames` label it. ' +
      RULES_NOTE,
    tag,
    scopes: ['transactions:write'],
    body: TransactionCreate,
    response: TransactionCreateResponse,
    statuses: [201],
    errors: [...WRITE_ERRORS, 'external_id_conflict'],
    requestExample: example,
    etag: true,
    handle: ({ tenant, auth, body }) => {
      const { written, rulesApplied } = recordTransaction(tenant, auth.subject.country, body)
      const data = toTransaction(viewOf(tenant, written.row))
      return { status: 201, body: { data, rulesApplied: rulesApplied ?? null }, location: `/v1/transactions/${written.row.id}` }
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/transactions/upsert',
    operationId: 'upsertTransaction',
    summary: 'Create or update a transaction by externalId (sync-safe ingestion)',
    description: `${RULES_NOTE} On an update the rules fill only the fields the stored transaction leaves empty.`,
    tag,
    scopes: ['transactions:write'],
    body: TransactionUpsert,
    response: TransactionUpsertResponse,
    statuses: [201, 200],
    errors: [...WRITE_ERRORS],
    requestExample: { externalId: 'bank-tx-9812', ...example },
    etag: true,
    handle: ({ tenant, auth, body }) => {
      const { created, written, rulesApplied } = upsertTransaction(tenant, auth.subject.country, body)
      const reply = upsertReply(created, toTransaction(viewOf(tenant, written.row)), `/v1/transactions/${written.row.id}`)
      return { ...reply, body: { ...reply.body, rulesApplied: rulesApplied ?? null } }
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/transactions/batch',
    operationId: 'importTransactions',
    summary: 'Import up to 500 transactions at once, all or nothing (upserts by externalId)',
    description:
      'Every item is a transaction upsert. The batch is applied in one database transaction: either every item is applied, or the first failing item’s error ' +
      '(its `detail` starts with the item’s path, e.g. `items[17].amount: …`) is returned and nothing is written. Each item reports `created`, `updated`, ' +
      '`unchanged` (it equals what is stored; nothing written) or `skipped_deleted` (with `ifDeleted: "skip"`, for an externalId whose transaction was deleted). ' +
      '`dryRun: true` checks every item, reports each one’s operation or all of its errors, and writes nothing. Body limit 4 MiB; the batch counts once against the rate limit. ' +
      '`applyRules: true` runs your active rules on each item (on an update, only into the fields the stored transaction leaves empty); each item’s `rulesApplied` lists the rules that matched (null without applyRules).',
    tag,
    scopes: ['transactions:write'],
    body: TransactionBatch,
    checkBody: checkBatchBody,
    maxBodyBytes: MAX_BATCH_BODY_BYTES,
    response: TransactionBatchResponse,
    statuses: [200],
    errors: [...WRITE_ERRORS],
    requestExample: {
      items: [
        { externalId: 'bank-tx-9812', ...example },
        { externalId: 'bank-tx-9813', accountId: example.accountId, amount: -2500, date: '2026-11-20', note: 'salary' },
      ],
    },
    handle: ({ tenant, auth, body }) => ({ status: 200, body: importTransactions(tenant, auth.subject.country, body) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/transactions/:transactionId',
    operationId: 'getTransaction',
    summary: 'Get a transaction',
    tag,
    scopes: ['transactions:read'],
    params: TransactionParams,
    response: TransactionResponse,
    statuses: [200],
    errors: ['not_found'],
    etag: true,
    handle: ({ tenant, params }) => ({ status: 200, body: { data: toTransaction(getTransactionView(tenant, params.transactionId)) } }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/transactions/:transactionId',
    operationId: 'updateTransaction',
    summary: 'Change a transaction (balances follow)',
    description:
      'Fields not sent keep their values. `splits`, `tagIds` and `tagNames` replace the legs or tags (`[]` clears them). The `amount` of a split transaction changes only together with `splits` that sum to it.',
    tag,
    scopes: ['transactions:write'],
    params: TransactionParams,
    body: TransactionUpdate,
    response: TransactionResponse,
    statuses: [200],
    errors: ['not_found', ...WRITE_ERRORS, 'external_id_conflict'],
    requestExample: { amount: 13.4, note: 'groceries and bread' },
    // If-Match is checked against the resource as it is now (CONTRACT §25).
    current,
    handle: ({ tenant, auth, params, body }) => {
      const { row } = updateTransaction(tenant, auth.subject.country, params.transactionId, body)
      return { status: 200, body: { data: toTransaction(viewOf(tenant, row)) } }
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/transactions/:transactionId',
    operationId: 'deleteTransaction',
    summary: 'Delete a transaction permanently (its effect on balances and payee totals is reversed)',
    description: 'Returns the transaction as it was.',
    tag,
    scopes: ['transactions:write'],
    params: TransactionParams,
    response: TransactionResponse,
    statuses: [200],
    // Reversing the effect can move a balance or payee total past ±92233720368: rule_violation.
    errors: ['not_found', 'rule_violation'],
    // If-Match is checked against the resource as it is now (CONTRACT §25).
    current,
    handle: ({ tenant, params }) => ({ status: 200, body: { data: toTransaction(deleteTransaction(tenant, params.transactionId)) } }),
  }),
]
