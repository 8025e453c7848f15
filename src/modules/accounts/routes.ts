import type { Tenant } from '../../db/tenant/tenant.ts'
import { defineRoute, upsertReply } from '../../platform/route.ts'
import {
  AccountCreate,
  AccountListQuery,
  AccountListResponse,
  AccountParams,
  AccountResponse,
  AccountUpdate,
  AccountUpsert,
  AccountUpsertResponse,
} from './model.ts'
import { toAccount } from './queries.ts'
import { archiveAccount, createAccount, getAccount, listAccounts, updateAccount, upsertAccount } from './service.ts'

const tag = 'Accounts'
const example = { name: 'Main checking', type: 'bank', balance: 1250.5, currency: 'EUR' }

/** The resource as GET shows it (404 when absent): what an If-Match is checked against. */
const current = ({ tenant, params }: { tenant: Tenant; params: { accountId: string } }) => toAccount(getAccount(tenant, params.accountId))

export const accountRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/accounts',
    operationId: 'listAccounts',
    summary: 'List accounts (oldest first)',
    tag,
    scopes: ['accounts:read'],
    query: AccountListQuery,
    response: AccountListResponse,
    statuses: [200],
    errors: ['validation_failed'],
    handle: ({ tenant, query }) => ({ status: 200, body: listAccounts(tenant, query) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/accounts',
    operationId: 'createAccount',
    summary: 'Create an account',
    tag,
    scopes: ['accounts:write'],
    body: AccountCreate,
    response: AccountResponse,
    statuses: [201],
    errors: ['invalid_reference', 'rule_violation', 'external_id_conflict', 'limit_reached'],
    requestExample: example,
    etag: true,
    handle: ({ tenant, body }) => {
      const row = createAccount(tenant, body)
      return { status: 201, body: { data: toAccount(row) }, location: `/v1/accounts/${row.id}` }
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/accounts/upsert',
    operationId: 'upsertAccount',
    summary: 'Create or update an account by externalId (sync)',
    description: 'Fields not sent keep their values; `balance` is set outright, like PATCH.',
    tag,
    scopes: ['accounts:write'],
    body: AccountUpsert,
    response: AccountUpsertResponse,
    statuses: [201, 200],
    errors: ['invalid_reference', 'rule_violation', 'limit_reached'],
    requestExample: { externalId: 'bank-123', ...example },
    etag: true,
    handle: ({ tenant, body }) => {
      const { created, row } = upsertAccount(tenant, body)
      return upsertReply(created, toAccount(row), `/v1/accounts/${row.id}`)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/accounts/:accountId',
    operationId: 'getAccount',
    summary: 'Get an account',
    tag,
    scopes: ['accounts:read'],
    params: AccountParams,
    response: AccountResponse,
    statuses: [200],
    errors: ['not_found'],
    etag: true,
    handle: ({ tenant, params }) => ({ status: 200, body: { data: toAccount(getAccount(tenant, params.accountId)) } }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/accounts/:accountId',
    operationId: 'updateAccount',
    summary: 'Change an account',
    description: 'Setting `balance` sets the current balance outright (a reconciliation).',
    tag,
    scopes: ['accounts:write'],
    params: AccountParams,
    body: AccountUpdate,
    response: AccountResponse,
    statuses: [200],
    errors: ['not_found', 'invalid_reference', 'rule_violation', 'external_id_conflict'],
    requestExample: { name: 'Joint checking', color: '#2255aa' },
    // If-Match is checked against the resource as it is now (CONTRACT §25).
    current,
    handle: ({ tenant, params, body }) => ({ status: 200, body: { data: toAccount(updateAccount(tenant, params.accountId, body)) } }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/accounts/:accountId',
    operationId: 'archiveAccount',
    summary: 'Archive an account',
    description: 'Accounts are archived, never removed; archiving again returns the account unchanged.',
    tag,
    scopes: ['accounts:write'],
    params: AccountParams,
    response: AccountResponse,
    statuses: [200],
    errors: ['not_found'],
    // If-Match is checked against the resource as it is now (CONTRACT §25).
    current,
    handle: ({ tenant, params }) => ({ status: 200, body: { data: toAccount(archiveAccount(tenant, params.accountId)) } }),
  }),
]
