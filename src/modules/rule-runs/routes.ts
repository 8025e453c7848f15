import { defineRoute } from '../../platform/route.ts'
import { RuleParams } from '../rules/model.ts'
import { RuleApply, RuleApplyResponse, RuleTest, RuleTestResponse } from './model.ts'
import { applyRule, testRule } from './service.ts'

const tag = 'Rules'
const RANGE_NOTE =
  'The range is inclusive and may hold at most 5,000 transactions (else 422 rule_violation: narrow it). With `overwrite: false` only the fields a transaction leaves empty are filled; `overwrite: true` replaces them. A split transaction’s category is never set (its legs hold the categories); tags are only added.'

export const ruleRunRoutes = [
  defineRoute({
    method: 'POST',
    path: '/v1/rules/test',
    operationId: 'testRule',
    summary: 'Show what a rule would change in a date range, writing nothing',
    description: `Send \`rule\` (as you would POST it) or \`ruleId\`. Makes each change exactly as apply would, newest first, and undoes it at once; answers the transactions it changes, before and after, stopping at \`limit\` (\`hasMore\`). A payee or tag the rule would create shows an id that exists only in the test. ${RANGE_NOTE}`,
    tag,
    scopes: ['transactions:read'],
    body: RuleTest,
    response: RuleTestResponse,
    // Up to 5,000 updates, each undone: a transaction of its own, never a savepoint in a group (RouteDef.alone).
    alone: true,
    statuses: [200],
    errors: ['not_found', 'invalid_reference', 'rule_violation'],
    requestExample: { ruleId: 'rul_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b', from: '2026-01-01', to: '2026-03-31' },
    handle: ({ tenant, auth, body }) => ({ status: 200, body: testRule(tenant, auth.subject.country, body) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/rules/:ruleId/apply',
    operationId: 'applyRule',
    summary: 'Apply a rule to the transactions of a date range',
    description: `Changes every transaction of the range the rule matches, all in one database transaction; each change enters the change feed once. ${RANGE_NOTE}`,
    tag,
    scopes: ['transactions:write'],
    params: RuleParams,
    body: RuleApply,
    response: RuleApplyResponse,
    // Up to 5,000 updates: a transaction of its own, never a savepoint in a group (RouteDef.alone).
    alone: true,
    statuses: [200],
    errors: ['not_found', 'invalid_reference', 'rule_violation', 'limit_reached'],
    requestExample: { from: '2026-01-01', to: '2026-03-31', overwrite: false },
    handle: ({ tenant, auth, params, body }) => ({ status: 200, body: applyRule(tenant, auth.subject.country, params.ruleId, body) }),
  }),
]
