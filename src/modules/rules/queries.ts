import { asc, eq, sql } from 'drizzle-orm'
import { lazyStatements } from '../../db/statements.ts'
import type { Tenant, TenantDrizzle } from '../../db/tenant/tenant.ts'
import { rules, type StoredCondition } from '../../db/tenant/schema.ts'
import { moneyJson } from '../../platform/money.ts'
import type { RuleOut } from './model.ts'

export type RuleRow = typeof rules.$inferSelect

/** Rules in the order they run, which is also the list's: priority, then creation. */
const inOrder = (db: TenantDrizzle) => db.select().from(rules).orderBy(asc(rules.priority), asc(rules.createdAt), asc(rules.id))
const after = sql`(${rules.priority}, ${rules.createdAt}, ${rules.id}) > (${sql.placeholder('priority')}, ${sql.placeholder('createdAt')}, ${sql.placeholder('id')})`

const statements = lazyStatements({
  byId: (db) =>
    db
      .select()
      .from(rules)
      .where(eq(rules.id, sql.placeholder('id')))
      .prepare(),
  byExternalId: (db) =>
    db
      .select()
      .from(rules)
      .where(eq(rules.externalId, sql.placeholder('externalId')))
      .prepare(),
  firstPage: (db) => inOrder(db).limit(sql.placeholder('limit')).prepare(),
  nextPage: (db) => inOrder(db).where(after).limit(sql.placeholder('limit')).prepare(),
  active: (db) => inOrder(db).where(eq(rules.isActive, true)).prepare(),
})

const ruleQueries = (tenant: Tenant) => tenant.prepared(statements)

export const findRule = (tenant: Tenant, id: string): RuleRow | undefined => ruleQueries(tenant).byId.get({ id })
export const findRuleByExternalId = (tenant: Tenant, externalId: string): RuleRow | undefined => ruleQueries(tenant).byExternalId.get({ externalId })
/** The rules that run on writes, in the order they run: one prepared query per request that asks for rules. */
export const activeRuleRows = (tenant: Tenant): RuleRow[] => ruleQueries(tenant).active.all()

/** Rules after the cursor, `limit` of them (-1: all), in run order. */
export function listRuleRows(tenant: Tenant, opts: { limit: number; after?: [number, number, string] }): RuleRow[] {
  const q = ruleQueries(tenant)
  if (!opts.after) return q.firstPage.all({ limit: opts.limit })
  const [priority, createdAt, id] = opts.after
  return q.nextPage.all({ limit: opts.limit, priority, createdAt, id })
}

/** A stored amount (an integer string of 10⁻⁸ units) as the exact decimal answers carry. */
const amountOut = (units: string) => moneyJson(units)

function conditionOut(condition: StoredCondition): RuleOut['conditions'][number] {
  const isAmount = condition.field === 'amount'
  const value = condition.value
  return {
    field: condition.field as RuleOut['conditions'][number]['field'],
    op: condition.op as RuleOut['conditions'][number]['op'],
    value: value === null ? null : Array.isArray(value) ? value.map((item) => (isAmount ? amountOut(item) : item)) : isAmount ? amountOut(value) : value,
    valueTo: condition.valueTo === null ? null : amountOut(condition.valueTo),
  }
}

export function toRule(row: RuleRow): RuleOut {
  return {
    id: row.id,
    externalId: row.externalId,
    name: row.name,
    priority: row.priority,
    isActive: row.isActive,
    match: row.match,
    conditions: row.conditions.map(conditionOut),
    actions: row.actions.map((action) => ({ set: action.set as RuleOut['actions'][number]['set'], value: action.value })),
    stopProcessing: row.stopProcessing,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}
