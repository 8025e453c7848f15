import type { StoredAction, StoredCondition } from '../../db/tenant/schema.ts'
import { compileGlob } from '../../lib/glob.ts'
import { normalizeName } from '../payees/normalize.ts'
import type { ActionField } from './model.ts'
import type { RuleRow } from './queries.ts'

/**
 * The rules engine (CONTRACT §23): a pure function from a transaction's facts and the owner's
 * rules to the fields the rules fill in. It reads nothing and writes nothing; the callers turn
 * its outcome into a write (transactions/rules.ts, rule-runs).
 */

/** What conditions read of a transaction, as it will be stored. `amount` is null when the request's amount is not a money value (the write then fails on it). */
export interface Facts {
  originalDescription: string | null
  payeeName: string | null
  note: string | null
  amount: bigint | null
  accountId: string
}

/** The facts conditions compare: text in the payees' normal form (CONTRACT §10), null text as ''. */
interface Normal {
  originalDescription: string
  payeeName: string
  note: string
  amount: bigint | null
  accountId: string
}

type TextField = 'originalDescription' | 'payeeName' | 'note'
type Test = (facts: Normal) => boolean

export interface CompiledRule {
  id: string
  holds: Test
  actions: readonly StoredAction[]
  stopProcessing: boolean
}

/** What a run fills in: the value of each field some rule set (the last rule to set it wins), the tags added, and the rules that matched. */
export interface Outcome {
  categoryId?: string
  payeeName?: string
  note?: string
  tagNames: string[]
  applied: string[]
}

const normal = (text: string | null) => (text === null ? '' : normalizeName(text))

function textTest(field: TextField, op: string, value: StoredCondition['value']): Test {
  if (op === 'isEmpty') return (facts) => facts[field] === ''
  if (op === 'oneOf') {
    const set = new Set((value as string[]).map(normal))
    return (facts) => set.has(facts[field])
  }
  const text = normal(value as string)
  switch (op) {
    case 'is':
      return (facts) => facts[field] === text
    case 'contains':
      return (facts) => facts[field].includes(text)
    case 'startsWith':
      return (facts) => facts[field].startsWith(text)
    case 'endsWith':
      return (facts) => facts[field].endsWith(text)
    case 'matches': {
      const glob = compileGlob(text)
      return (facts) => glob.matches(facts[field])
    }
  }
  throw new Error(`rule condition: ${op} is not a text operator`)
}

function amountTest(op: string, value: StoredCondition['value'], valueTo: string | null): Test {
  if (op === 'oneOf') {
    const set = new Set((value as string[]).map((units) => BigInt(units)))
    return (facts) => facts.amount !== null && set.has(facts.amount)
  }
  const low = BigInt(value as string)
  if (op === 'is') return (facts) => facts.amount === low
  if (op === 'between') {
    const high = BigInt(valueTo as string)
    return (facts) => facts.amount !== null && facts.amount >= low && facts.amount <= high
  }
  throw new Error(`rule condition: ${op} is not an amount operator`)
}

function accountTest(op: string, value: StoredCondition['value']): Test {
  if (op === 'oneOf') {
    const set = new Set(value as string[])
    return (facts) => set.has(facts.accountId)
  }
  const id = value as string
  return (facts) => facts.accountId === id
}

function conditionTest({ field, op, value, valueTo }: StoredCondition): Test {
  if (field === 'amount') return amountTest(op, value, valueTo)
  if (field === 'accountId') return accountTest(op, value)
  return textTest(field as TextField, op, value)
}

/** A stored rule made ready to run: its conditions compiled once (text normalized, globs built). */
export function compileRule(row: Pick<RuleRow, 'id' | 'match' | 'conditions' | 'actions' | 'stopProcessing'>): CompiledRule {
  const tests = row.conditions.map(conditionTest)
  const holds: Test = row.match === 'any' ? (facts) => tests.some((test) => test(facts)) : (facts) => tests.every((test) => test(facts))
  return { id: row.id, holds, actions: row.actions, stopProcessing: row.stopProcessing }
}

/**
 * Runs `rules` in the order given over `facts`. A rule whose conditions hold is applied: each of
 * its actions sets its field when that field is in `free` (a field the request set, or that
 * holds a value the run must keep, is never written), and later rules see what it set.
 * `stopProcessing` ends the run after its rule. `payeeShownAs` gives the name a payee name
 * will be stored under (an alias's payee), for later conditions on `payeeName`.
 */
export function runRules(
  rules: readonly CompiledRule[],
  facts: Facts,
  free: ReadonlySet<ActionField>,
  payeeShownAs: (name: string) => string = (name) => name,
): Outcome {
  const now: Normal = {
    originalDescription: normal(facts.originalDescription),
    payeeName: normal(facts.payeeName),
    note: normal(facts.note),
    amount: facts.amount,
    accountId: facts.accountId,
  }
  const outcome: Outcome = { tagNames: [], applied: [] }
  const tagKeys = new Set<string>()
  for (const rule of rules) {
    if (!rule.holds(now)) continue
    outcome.applied.push(rule.id)
    for (const action of rule.actions) {
      if (!free.has(action.set as ActionField)) continue
      if (action.set === 'categoryId') outcome.categoryId = action.value as string
      else if (action.set === 'payeeName') {
        outcome.payeeName = action.value as string
        now.payeeName = normal(payeeShownAs(action.value as string))
      } else if (action.set === 'note') {
        outcome.note = action.value as string
        now.note = normal(action.value as string)
      } else {
        for (const name of action.value as string[]) {
          const key = normalizeName(name)
          if (tagKeys.has(key)) continue
          tagKeys.add(key)
          outcome.tagNames.push(name)
        }
      }
    }
    if (rule.stopProcessing) break
  }
  return outcome
}
