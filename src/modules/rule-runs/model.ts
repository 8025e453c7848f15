import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { CalendarDate, Name } from '../../platform/schemas.ts'
import { RuleCreate } from '../rules/model.ts'
import { Transaction } from '../transactions/model.ts'

/** Running one rule over stored transactions (CONTRACT §23): `rules test` shows, `rules apply` writes. */

/** The most transactions one run reads: a range holding more is refused, so a run stays one bounded transaction. */
export const MAX_RUN_TRANSACTIONS = 5_000

const range = {
  from: CalendarDate,
  to: CalendarDate,
  accountId: t.Optional(t.String({ minLength: 1, description: 'only the transactions of this account (as their `accountId`)' })),
  overwrite: t.Optional(
    t.Boolean({ description: 'default false: fill only the fields a transaction leaves empty; true: replace them (tags are only ever added)' }),
  ),
}

/** A rule as `POST /v1/rules` takes it, its name optional: test a rule before saving it. */
const DraftRule = t.Object({ ...RuleCreate.properties, name: t.Optional(Name) }, { title: 'RuleDraft', additionalProperties: false })

export const RuleTest = t.Object(
  {
    rule: t.Optional(DraftRule),
    ruleId: t.Optional(t.String({ minLength: 1, description: 'a saved rule (active or not); send this or `rule`' })),
    ...range,
    limit: t.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'stop after this many changed transactions, 1–200 (default 50)' })),
  },
  { title: 'RuleTest', additionalProperties: false },
)

export const RuleApply = t.Object(range, { title: 'RuleApply', additionalProperties: false })

const Summary = t.Object(
  {
    scanned: Type.Integer({ minimum: 0, description: 'transactions read (a test: until it stopped)' }),
    matched: Type.Integer({ minimum: 0, description: 'of those, the ones whose conditions held' }),
    changed: Type.Integer({ minimum: 0, description: 'of those, the ones the rule changes (the others already hold what it sets, or keep what they hold)' }),
  },
  { title: 'RuleRunSummary', additionalProperties: false },
)

export const RuleTestResponse = t.Object(
  {
    data: t.Array(
      t.Object(
        { before: Transaction, after: Transaction },
        { title: 'RuleTestChange', additionalProperties: false, description: 'one transaction as it is, and as `apply` would leave it' },
      ),
      { description: 'the transactions the rule would change, newest first, up to `limit`' },
    ),
    summary: Summary,
    hasMore: t.Boolean({ description: 'the test stopped at `limit` changes before the end of the range: there may be more' }),
  },
  { title: 'RuleTestResponse', additionalProperties: false },
)

export const RuleApplyResponse = t.Object(
  {
    data: t.Object(
      {
        ruleId: t.String(),
        scanned: Summary.properties.scanned,
        matched: Summary.properties.matched,
        changed: Summary.properties.changed,
        transactionIds: t.Array(t.String(), { description: 'the transactions changed, newest first' }),
      },
      { title: 'RuleApplyResult', additionalProperties: false },
    ),
  },
  { title: 'RuleApplyResponse', additionalProperties: false },
)

export type RuleTestInput = typeof RuleTest.static
export type RuleApplyInput = typeof RuleApply.static
