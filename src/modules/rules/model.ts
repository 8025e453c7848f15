import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { Cursor, EpochMs, ExternalId, Id, Limit, ListOf, Name, Nullable, PathId, SingleOf, UpdatedAt, UpsertOf } from '../../platform/schemas.ts'

/** Rules (CONTRACT §23): conditions on a transaction, and the fields they fill in when they hold. */

export const CONDITION_FIELDS = ['originalDescription', 'payeeName', 'note', 'amount', 'accountId'] as const
export const CONDITION_OPS = ['is', 'contains', 'startsWith', 'endsWith', 'oneOf', 'matches', 'between', 'isEmpty'] as const
export const ACTION_FIELDS = ['categoryId', 'payeeName', 'note', 'tagNames'] as const

export type ConditionField = (typeof CONDITION_FIELDS)[number]
export type ConditionOp = (typeof CONDITION_OPS)[number]
export type ActionField = (typeof ACTION_FIELDS)[number]

export const MAX_CONDITIONS = 10
export const MAX_ACTIONS = 10
export const MAX_ONE_OF = 50
/** A `matches` pattern with `?` runs as an automaton of one machine word: at most 31 characters besides `*`. */
export const MAX_WILDCARD_GLOB = 31
export const MAX_PRIORITY = 1_000_000
export const DEFAULT_PRIORITY = 100

const literals = <T extends string>(values: readonly T[], description: string) =>
  t.Union(
    values.map((value) => t.Literal(value)),
    { description },
  )

const FieldSchema = literals(
  CONDITION_FIELDS,
  'what the condition reads: the bank text, the payee’s name, the note (text, compared without case or accents), the amount (signed: positive = expense) or the account',
)
const OpSchema = literals(
  CONDITION_OPS,
  'text: is, contains, startsWith, endsWith, oneOf, matches (a glob: * any run, ? one character), isEmpty; amount: is, oneOf, between (inclusive); accountId: is, oneOf',
)
const ActionFieldSchema = literals(ACTION_FIELDS, 'the field the action fills in; tagNames adds tags')

const Match = t.Union([t.Literal('all'), t.Literal('any')], { description: '`all`: every condition must hold; `any`: one is enough' })
const Priority = Type.Integer({
  minimum: 0,
  maximum: MAX_PRIORITY,
  description: `rules run by ascending priority, then by creation; 0–${MAX_PRIORITY}, default ${DEFAULT_PRIORITY}`,
})

const ConditionValueOut = Nullable(
  t.Union([t.String(), t.Number(), t.Array(t.Union([t.String(), t.Number()]))], {
    description: 'text, an amount, or a list of either for oneOf; null for isEmpty',
  }),
)

export const Condition = t.Object(
  {
    field: FieldSchema,
    op: OpSchema,
    value: ConditionValueOut,
    valueTo: Nullable(t.Number({ description: 'the upper bound of between (inclusive); null for other operators' })),
  },
  { title: 'RuleCondition', additionalProperties: false },
)

export const Action = t.Object(
  {
    set: ActionFieldSchema,
    value: t.Union([t.String(), t.Array(t.String())], { description: 'a category id, a payee name, a note, or a list of tag names' }),
  },
  { title: 'RuleAction', additionalProperties: false },
)

export const Rule = t.Object(
  {
    id: Id('rul', 'rul_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b'),
    externalId: Nullable(t.String()),
    name: t.String(),
    priority: Type.Integer(),
    isActive: t.Boolean({ description: 'inactive rules never run on writes; rules test and apply still take them by id' }),
    match: Match,
    conditions: t.Array(Condition),
    actions: t.Array(Action),
    stopProcessing: t.Boolean({ description: 'when this rule matches, no later rule runs' }),
    createdAt: EpochMs,
    updatedAt: UpdatedAt,
  },
  { title: 'Rule', additionalProperties: false },
)

const TextOrMoney = t.Union([t.String({ maxLength: 200 }), t.Number()])

export const ConditionInput = t.Object(
  {
    field: FieldSchema,
    op: OpSchema,
    value: t.Optional(
      Nullable(
        t.Union([TextOrMoney, t.Array(TextOrMoney, { minItems: 1, maxItems: MAX_ONE_OF })], {
          description: `text (≤ 200 characters) or an exact amount; for oneOf a list of 1–${MAX_ONE_OF}; absent or null for isEmpty`,
        }),
      ),
    ),
    valueTo: t.Optional(Nullable(t.Number({ description: 'between only: the upper bound, inclusive (an exact amount ≥ value)' }))),
  },
  { title: 'RuleConditionInput', additionalProperties: false },
)

export const ActionInput = t.Object(
  {
    set: ActionFieldSchema,
    value: t.Union([t.String({ maxLength: 2000 }), t.Array(Name, { minItems: 1, maxItems: 20 })], {
      description: 'categoryId: one of your category ids (not archived); payeeName: a name (≤ 200); note: text (≤ 2000); tagNames: 1–20 names',
    }),
  },
  { title: 'RuleActionInput', additionalProperties: false },
)

const Conditions = t.Array(ConditionInput, { minItems: 1, maxItems: MAX_CONDITIONS, description: `1–${MAX_CONDITIONS} conditions` })
const Actions = t.Array(ActionInput, { minItems: 1, maxItems: MAX_ACTIONS, description: `1–${MAX_ACTIONS} actions, at most one per field` })

const optional = {
  priority: t.Optional(Priority),
  isActive: t.Optional(t.Boolean({ description: 'default true' })),
  match: t.Optional(Match),
  stopProcessing: t.Optional(t.Boolean({ description: 'default false' })),
}

export const RuleCreate = t.Object(
  { name: Name, externalId: t.Optional(ExternalId), conditions: Conditions, actions: Actions, ...optional },
  { title: 'RuleCreate', additionalProperties: false },
)

export const RuleUpsert = t.Object(
  { externalId: ExternalId, name: Name, conditions: Conditions, actions: Actions, ...optional },
  { title: 'RuleUpsert', additionalProperties: false },
)

export const RuleUpdate = t.Object(
  {
    externalId: t.Optional(Nullable(ExternalId)),
    name: t.Optional(Name),
    conditions: t.Optional(Conditions),
    actions: t.Optional(Actions),
    ...optional,
  },
  { title: 'RuleUpdate', additionalProperties: false },
)

export const RuleListQuery = t.Object({ limit: t.Optional(Limit), cursor: t.Optional(Cursor) }, { additionalProperties: false })

export const RuleParams = PathId('ruleId')
export const RuleResponse = SingleOf(Rule, 'RuleResponse')
export const RuleListResponse = ListOf(Rule, 'RuleListResponse')
export const RuleUpsertResponse = UpsertOf(Rule, 'RuleUpsertResponse')

export type RuleOut = typeof Rule.static
export type RuleUpdateInput = typeof RuleUpdate.static
export type RuleCreateInput = typeof RuleCreate.static
export type ConditionInputValue = typeof ConditionInput.static
export type ActionInputValue = typeof ActionInput.static
