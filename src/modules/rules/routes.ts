import type { Tenant } from '../../db/tenant/tenant.ts'
import { defineRoute, upsertReply } from '../../platform/route.ts'
import { RuleCreate, RuleListQuery, RuleListResponse, RuleParams, RuleResponse, RuleUpdate, RuleUpsert, RuleUpsertResponse } from './model.ts'
import { toRule } from './queries.ts'
import { createRule, deleteRule, getRule, listRules, updateRule, upsertRule } from './service.ts'

/** Rules fill in transactions: they take the transaction scopes (CONTRACT §23). */
const tag = 'Rules'
/** If-Match on PATCH and DELETE is checked against the rule as it is now (CONTRACT §25). */
const current = ({ tenant, params }: { tenant: Tenant; params: { ruleId: string } }) => toRule(getRule(tenant, params.ruleId))
const WRITE_ERRORS = ['invalid_reference', 'rule_violation'] as const

const example = {
  name: 'Coffee',
  conditions: [{ field: 'originalDescription', op: 'matches', value: '*STARBUCKS*' }],
  actions: [
    { set: 'payeeName', value: 'Starbucks' },
    { set: 'categoryId', value: 'cat_sys_coffee' },
  ],
}

export const ruleRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/rules',
    operationId: 'listRules',
    summary: 'List rules in the order they run (priority, then creation)',
    tag,
    scopes: ['transactions:read'],
    query: RuleListQuery,
    response: RuleListResponse,
    statuses: [200],
    errors: ['validation_failed'],
    handle: ({ tenant, query }) => ({ status: 200, body: listRules(tenant, query) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/rules',
    operationId: 'createRule',
    summary: 'Create a rule',
    description:
      'Conditions read `originalDescription`, `payeeName`, `note` (case- and accent-insensitive), `amount` or `accountId`; actions fill in `categoryId`, `payeeName`, `note`, or add `tagNames`. ' +
      'Rules run on create, upsert and batch writes that send `applyRules: true`, and never overwrite a field the request set.',
    tag,
    scopes: ['transactions:write'],
    body: RuleCreate,
    response: RuleResponse,
    statuses: [201],
    errors: [...WRITE_ERRORS, 'external_id_conflict', 'limit_reached'],
    requestExample: example,
    etag: true,
    handle: ({ tenant, auth, body }) => {
      const row = createRule(tenant, auth.subject.country, body)
      return { status: 201, body: { data: toRule(row) }, location: `/v1/rules/${row.id}` }
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/rules/upsert',
    operationId: 'upsertRule',
    summary: 'Create or update a rule by externalId (sync)',
    tag,
    scopes: ['transactions:write'],
    body: RuleUpsert,
    response: RuleUpsertResponse,
    statuses: [201, 200],
    errors: [...WRITE_ERRORS, 'limit_reached'],
    requestExample: { externalId: 'rule-coffee', ...example },
    etag: true,
    handle: ({ tenant, auth, body }) => {
      const { created, row } = upsertRule(tenant, auth.subject.country, body)
      return upsertReply(created, toRule(row), `/v1/rules/${row.id}`)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/rules/:ruleId',
    operationId: 'getRule',
    summary: 'Get a rule',
    tag,
    scopes: ['transactions:read'],
    params: RuleParams,
    response: RuleResponse,
    statuses: [200],
    errors: ['not_found'],
    etag: true,
    handle: ({ tenant, params }) => ({ status: 200, body: { data: toRule(getRule(tenant, params.ruleId)) } }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/rules/:ruleId',
    operationId: 'updateRule',
    summary: 'Change a rule',
    description: 'Fields not sent keep their values; `conditions` and `actions` replace the lists.',
    tag,
    scopes: ['transactions:write'],
    params: RuleParams,
    body: RuleUpdate,
    response: RuleResponse,
    statuses: [200],
    errors: ['not_found', ...WRITE_ERRORS, 'external_id_conflict'],
    requestExample: { priority: 10, isActive: false },
    current,
    handle: ({ tenant, auth, params, body }) => ({ status: 200, body: { data: toRule(updateRule(tenant, auth.subject.country, params.ruleId, body)) } }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/rules/:ruleId',
    operationId: 'deleteRule',
    summary: 'Delete a rule permanently',
    description: 'Returns the rule as it was. What the rule filled in on transactions stays. To pause a rule instead, PATCH `isActive: false`.',
    tag,
    scopes: ['transactions:write'],
    params: RuleParams,
    response: RuleResponse,
    statuses: [200],
    errors: ['not_found'],
    current,
    handle: ({ tenant, params }) => ({ status: 200, body: { data: toRule(deleteRule(tenant, params.ruleId)) } }),
  }),
]
