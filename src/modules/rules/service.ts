import { settleCreated } from '../../db/tenant/change-log.ts'
import { eq } from 'drizzle-orm'
import { isId, newId } from '../../db/ids.ts'
import { rules, type StoredAction, type StoredCondition } from '../../db/tenant/schema.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { ApiError, externalIdConflict, invalidReference, notFound, ruleViolation } from '../../platform/errors.ts'
import { readMoney } from '../../platform/money.ts'
import { assertRoomFor } from '../../platform/owner-limits.ts'
import { decodeCursor, page } from '../../platform/pagination.ts'
import { trimmed } from '../../platform/schemas.ts'
import { findAccount } from '../accounts/queries.ts'
import { findCategory, isVisibleTo } from '../categories/queries.ts'
import { normalizeName } from '../payees/normalize.ts'
import { findTagByNormalizedName } from '../tags/queries.ts'
import {
  type ActionInputValue,
  type ConditionField,
  type ConditionInputValue,
  type ConditionOp,
  DEFAULT_PRIORITY,
  MAX_WILDCARD_GLOB,
  type RuleCreateInput,
  type RuleUpdateInput,
} from './model.ts'
import { findRule, findRuleByExternalId, listRuleRows, type RuleRow, toRule } from './queries.ts'

/**
 * Rules (CONTRACT §23): what a rule may say is checked when it is saved, so that running it
 * never meets a condition it cannot read. A condition whose parts do not fit together (an
 * operator the field does not take, a value of the wrong kind) is refused as a schema would
 * refuse it (422 validation_failed, naming `conditions[i]…`); an action naming a category that is
 * not the owner's is `invalid_reference`, an archived category or tag `rule_violation`.
 */

const TEXT_OPS: readonly ConditionOp[] = ['is', 'contains', 'startsWith', 'endsWith', 'oneOf', 'matches', 'isEmpty']
const OPS_OF: Record<ConditionField, readonly ConditionOp[]> = {
  originalDescription: TEXT_OPS,
  payeeName: TEXT_OPS,
  note: TEXT_OPS,
  amount: ['is', 'oneOf', 'between'],
  accountId: ['is', 'oneOf'],
}

const shape = (detail: string) => new ApiError('validation_failed', detail)
const isNumber = (value: unknown): value is number => typeof value === 'number'
const isText = (value: unknown): value is string => typeof value === 'string'

/** Text a condition compares: it must keep something once normalized, or it could match nothing but an empty field. */
function conditionText(value: unknown, field: string): string {
  if (!isText(value)) throw shape(`${field} must be text`)
  const text = value.trim()
  if (!normalizeName(text)) throw shape(`${field} must contain letters, digits or signs, not only marks or spaces`)
  return text
}

/** A condition as stored: money as integer strings of 10⁻⁸ units, text trimmed. */
function storedCondition(tenant: Tenant, condition: ConditionInputValue, at: string): StoredCondition {
  const { field, op } = condition
  const value = condition.value ?? null
  const valueTo = condition.valueTo ?? null
  const allowed = OPS_OF[field]
  if (!allowed.includes(op)) throw shape(`${at}.op: '${op}' does not apply to ${field}; ${field} takes ${allowed.join(', ')}`)
  if (valueTo !== null && op !== 'between') throw shape(`${at}.valueTo: only between takes valueTo`)
  if (op === 'isEmpty') {
    if (value !== null) throw shape(`${at}.value: isEmpty takes no value`)
    return { field, op, value: null, valueTo: null }
  }
  if (value === null) throw shape(`${at}.value: is required for ${op}`)
  const list = op === 'oneOf'
  if (list !== Array.isArray(value)) throw shape(list ? `${at}.value must be a list for oneOf` : `${at}.value must not be a list (only oneOf takes one)`)
  const items = (Array.isArray(value) ? value : [value]) as unknown[]
  const itemAt = (index: number) => (list ? `${at}.value[${index}]` : `${at}.value`)
  let stored: string[]
  if (field === 'amount') {
    stored = items.map((item, index) => {
      if (!isNumber(item)) throw shape(`${itemAt(index)} must be a number (an amount)`)
      return String(readMoney(list ? (value as object) : condition, list ? String(index) : 'value', itemAt(index)))
    })
  } else if (field === 'accountId') {
    stored = items.map((item, index) => {
      if (!isText(item)) throw shape(`${itemAt(index)} must be an account id`)
      if (!findAccount(tenant, item)) throw invalidReference(itemAt(index), item)
      return item
    })
  } else {
    stored = items.map((item, index) => conditionText(item, itemAt(index)))
    const pattern = stored[0] as string
    if (op === 'matches' && pattern.includes('?') && [...pattern.replaceAll('*', '')].length > MAX_WILDCARD_GLOB) {
      throw shape(`${at}.value: a pattern with ? may hold at most ${MAX_WILDCARD_GLOB} characters besides *`)
    }
  }
  if (op !== 'between') return { field, op, value: list ? stored : (stored[0] as string), valueTo: null }
  if (valueTo === null) throw shape(`${at}.valueTo: is required for between`)
  const low = BigInt(stored[0] as string)
  const high = readMoney(condition, 'valueTo', `${at}.valueTo`)
  if (high < low) throw shape(`${at}.valueTo must be at least value (between is inclusive: value ≤ amount ≤ valueTo)`)
  return { field, op, value: stored[0] as string, valueTo: String(high) }
}

function storedAction(tenant: Tenant, country: string | null, action: ActionInputValue, at: string): StoredAction {
  const { set, value } = action
  if (set === 'tagNames') {
    if (!Array.isArray(value)) throw shape(`${at}.value must be a list of tag names for tagNames`)
    return {
      set,
      value: value.map((name, index) => {
        const normalized = normalizeName(name)
        if (!normalized) throw shape(`${at}.value[${index}] must contain letters or digits, not only marks or spaces`)
        const tag = findTagByNormalizedName(tenant, normalized)
        if (tag?.isArchived) throw ruleViolation(`${at}.value[${index}]: tag ${JSON.stringify(tag.name)} (${tag.id}) is archived; restore it or name another`)
        return name.trim()
      }),
    }
  }
  if (!isText(value)) throw shape(`${at}.value must be text for ${set}`)
  if (set === 'categoryId') {
    const category = findCategory(tenant, value)
    if (!category || !isVisibleTo(category, country)) throw invalidReference(`${at}.value`, value)
    if (category.isArchived) throw ruleViolation(`${at}.value: category ${JSON.stringify(category.name)} (${value}) is archived; name a live category`)
    return { set, value }
  }
  const text = value.trim()
  if (set === 'payeeName') {
    if (!normalizeName(text)) throw shape(`${at}.value must contain letters or digits, not only marks or spaces`)
    if ([...text].length > 200) throw shape(`${at}.value must be at most 200 characters for payeeName`)
    return { set, value: text }
  }
  if (!text) throw shape(`${at}.value must not be blank`)
  return { set, value: text }
}

function storedActions(tenant: Tenant, country: string | null, actions: ActionInputValue[], prefix: string): StoredAction[] {
  const seen = new Map<string, number>()
  return actions.map((action, index) => {
    const first = seen.get(action.set)
    if (first !== undefined) throw shape(`${prefix}actions[${index}].set: ${action.set} is already set by ${prefix}actions[${first}]; one action per field`)
    seen.set(action.set, index)
    return storedAction(tenant, country, action, `${prefix}actions[${index}]`)
  })
}

type Changes = Partial<Omit<RuleRow, 'id' | 'createdAt' | 'updatedAt'>>

/** `prefix`: where the rule sits in the request (`rule.` in a rules test), for the fields a refusal names. */
function changesFrom(tenant: Tenant, country: string | null, body: RuleUpdateInput, selfId?: string, prefix = ''): Changes {
  const changes: Changes = {}
  if (body.externalId !== undefined) {
    const externalId = trimmed(body.externalId)
    const holder = externalId === null ? undefined : findRuleByExternalId(tenant, externalId)
    if (holder && holder.id !== selfId) throw externalIdConflict('rule', externalId, holder.id)
    changes.externalId = externalId
  }
  if (body.name !== undefined) changes.name = body.name.trim()
  if (body.priority !== undefined) changes.priority = body.priority
  if (body.isActive !== undefined) changes.isActive = body.isActive
  if (body.match !== undefined) changes.match = body.match
  if (body.stopProcessing !== undefined) changes.stopProcessing = body.stopProcessing
  if (body.conditions !== undefined)
    changes.conditions = body.conditions.map((condition, index) => storedCondition(tenant, condition, `${prefix}conditions[${index}]`))
  if (body.actions !== undefined) changes.actions = storedActions(tenant, country, body.actions, prefix)
  return changes
}

/** A rule's full stored form, checked, without saving it: what `rules test` runs for a rule sent inline (as `field`). */
export function draftRule(tenant: Tenant, country: string | null, body: RuleCreateInput, field: string): RuleRow {
  const changes = changesFrom(tenant, country, { ...body, externalId: undefined }, undefined, `${field}.`)
  return ruleRow('rul_draft', changes)
}

/** A new rule's row: the defaults, then what the request gave. */
function ruleRow(id: string, changes: Changes): RuleRow {
  const now = Date.now()
  return {
    id,
    externalId: null,
    priority: DEFAULT_PRIORITY,
    isActive: true,
    match: 'all',
    stopProcessing: false,
    createdAt: now,
    updatedAt: now,
    name: changes.name as string,
    conditions: changes.conditions as StoredCondition[],
    actions: changes.actions as StoredAction[],
    ...changes,
  }
}

export function getRule(tenant: Tenant, id: string): RuleRow {
  const row = findRule(tenant, id)
  if (!row) throw notFound('Rule', id)
  return row
}

export function createRule(tenant: Tenant, country: string | null, body: RuleCreateInput): RuleRow {
  return tenant.write(() => {
    const changes = changesFrom(tenant, country, body)
    assertRoomFor(tenant, 'rules')
    const row = ruleRow(newId('rul'), changes)
    tenant.db.insert(rules).values(row).run()
    settleCreated(tenant, 'rules', row.id)
    return row
  })
}

export function updateRule(tenant: Tenant, country: string | null, id: string, body: RuleUpdateInput): RuleRow {
  return tenant.write(() => {
    const current = getRule(tenant, id)
    const changes = changesFrom(tenant, country, body, id)
    if (Object.keys(changes).length === 0) return current
    tenant.db.update(rules).set(changes).where(eq(rules.id, id)).run()
    // Read back: the feed's trigger stamped updatedAt if anything changed (CONTRACT §25).
    return getRule(tenant, id)
  })
}

/** Permanent: the rule stops running; what it filled in stays. The feed keeps a tombstone (CONTRACT §15). */
export function deleteRule(tenant: Tenant, id: string): RuleRow {
  return tenant.write(() => {
    const current = getRule(tenant, id)
    tenant.db.delete(rules).where(eq(rules.id, id)).run()
    return current
  })
}

export function upsertRule(tenant: Tenant, country: string | null, body: RuleCreateInput & { externalId: string }) {
  return tenant.write(() => {
    const existing = findRuleByExternalId(tenant, body.externalId.trim())
    if (!existing) return { created: true, row: createRule(tenant, country, body) }
    return { created: false, row: updateRule(tenant, country, existing.id, body) }
  })
}

export function listRules(tenant: Tenant, query: { limit?: number; cursor?: string }) {
  const limit = query.limit ?? 50
  const after = decodeCursor(query.cursor, 'nns') as [number, number, string] | undefined
  if (after && !isId('rul', after[2])) throw new ApiError('validation_failed', "query parameter 'cursor' is not a cursor from this list")
  const rows = listRuleRows(tenant, { limit: limit + 1, after })
  return page(rows, limit, (row) => [row.priority, row.createdAt, row.id], toRule)
}

/** Every rule in run order (inactive ones only when asked): the agent context's. */
export function allRules(tenant: Tenant, includeInactive: boolean) {
  const rows = listRuleRows(tenant, { limit: -1 })
  return (includeInactive ? rows : rows.filter((row) => row.isActive)).map(toRule)
}
