import { type TSchema, Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { entityVersion, lastSeq } from '../../db/tenant/change-log.ts'
import type { AuthContext } from '../../platform/auth.ts'
import { canonicalJson } from '../../platform/canonical-json.ts'
import type { Platform, RequestState } from '../../platform/context.ts'
import { problemBody } from '../../platform/errors.ts'
import { Issues } from '../../platform/issues.ts'
import { decimalOfUnits, unitsFromLexeme } from '../../platform/money.ts'
import { decodeJsonVerbatim } from '../../platform/json.ts'
import { numberSource, withoutKeys } from '../../platform/number-sources.ts'
import { type Invocation, invoke, invokePrepared } from '../../platform/invoke.ts'
import { type AnyRoute, isWriteMethod } from '../../platform/route.ts'
import { mayCall } from '../../platform/scopes.ts'
import { addIssues, describeError } from '../../platform/validation.ts'
import { TransactionBatchEnvelope } from '../transactions/batch-model.ts'
import { argumentDescription } from './arguments.ts'
import { checkConfirmToken, issueConfirmToken } from './confirm.ts'

/**
 * The agent tools (CONTRACT §17). Each is one REST operation underneath, run by `invoke`
 * through the same checks, handler and transaction as over HTTP: no rule lives here twice.
 * A tool's input schema is its route's (query, path and body schemas merged); its result
 * carries the REST response body as structured content, plus the same JSON as compact text.
 */

export interface ToolCall {
  platform: Platform
  state: RequestState
  auth: AuthContext
  /** Each tools/call's `arguments` as decoded from the body, by JSON-RPC id: they keep their numbers' texts. */
  decodedArguments?: Map<unknown, Record<string, unknown>>
}

export interface ToolResult {
  /** The REST status (an error ≥ 400 becomes an MCP tool error carrying the problem). */
  status: number
  /** The REST body, parsed: what `structuredContent` carries. */
  body: Record<string, unknown>
  /** One line ahead of the JSON text, for agents that read text. */
  summary?: string
}

export interface ToolSpec {
  name: string
  title: string
  description: string
  /** The routes it runs: the tool is listed only for a key that may call all of them. */
  routes: AnyRoute[]
  input: TSchema
  /** What `structuredContent` holds on success, as JSON Schema (an object at its root): the REST body, or a plan. */
  output: TSchema
  /** What the arguments are checked against before the run, when not `input` (import: items are the dry run's to report). */
  checked?: TSchema
  readOnly: boolean
  destructive: boolean
  run(call: ToolCall, args: Record<string, unknown>): ToolResult | Promise<ToolResult>
}

const SIGN_CONVENTION = 'Amounts are exact decimals (up to 8 places): a positive amount is an expense (money out of the account), a negative amount is income.'
const SPLITS_AND_TAGS =
  'To split one transaction across categories (a receipt of groceries and household), send `splits`: 2 to 100 legs `{amount, categoryId?, payeeId?, payeeName?, note?}` whose amounts sum exactly to the transaction’s `amount` (a leg may be 0 or of the opposite sign, a refund inside a purchase); do not send `categoryId` with them. `splits: []` unsplits; leaving `splits` out keeps the legs, and then `amount` cannot change: send `amount` and `splits` together. A transfer cannot be split. Label with `tagIds` (your tags) or `tagNames` (found by name or created), up to 20, not both; a list replaces the tags, `[]` clears them.'
const RULES_NOTE =
  'With applyRules: true the owner’s rules fill in what the items leave out (never a field you send) and each result lists the rules that matched in rulesApplied.'
const LIST_DEFAULTS = { defaults: { limit: 50 } }
const LIST_NOTE = 'Returns at most `limit` items (default 50) and a `nextCursor`; pass it back as `cursor` for the next page while `hasMore` is true.'
/** Above this many items, bulk_update_transactions plans first (a dry run and a confirmToken). */
export const BULK_CONFIRM_ABOVE = 20

function routeOf(routes: readonly AnyRoute[], operationId: string): AnyRoute {
  const route = routes.find((candidate) => candidate.operationId === operationId)
  if (!route) throw new Error(`no route ${operationId} for an MCP tool`)
  return route
}

type Properties = Record<string, TSchema>
const propertiesOf = (schema: TSchema | undefined): Properties => (schema as { properties?: Properties } | undefined)?.properties ?? {}

/** The properties of several object schemas as one object schema (path id + body, query + …). */
function merged(...schemas: (TSchema | undefined)[]): TSchema {
  const properties: Properties = {}
  for (const schema of schemas) Object.assign(properties, propertiesOf(schema))
  return t.Object(properties, { additionalProperties: false })
}

function pick(args: Record<string, unknown>, schema: TSchema | undefined): Record<string, unknown> | undefined {
  const names = Object.keys(propertiesOf(schema))
  if (names.length === 0) return undefined
  const out: Record<string, unknown> = {}
  for (const name of names) if (args[name] !== undefined) out[name] = args[name]
  return out
}

/** Everything in `args` that is not a path parameter: the body, unknown fields included (the route refuses them). */
function bodyOf(args: Record<string, unknown>, params: TSchema | undefined): Record<string, unknown> {
  // The copy keeps the numbers' texts: the route reads money from them exactly, as over REST.
  return withoutKeys(args, new Set(Object.keys(propertiesOf(params))))
}

function run(call: ToolCall, route: AnyRoute, invocation: Invocation): ToolResult {
  return resultOf(invoke(call.platform, route, call.state, call.auth, invocation))
}

function resultOf(outcome: ReturnType<typeof invoke>): ToolResult {
  // Verbatim: an 18-digit balance reaches the agent as REST wrote it, not rounded to a double.
  const body = decodeJsonVerbatim(outcome.body) as Record<string, unknown>
  // What REST says in a header an agent sees in the result: the context's feed position.
  const changesCursor = outcome.headers?.['x-changes-cursor']
  if (changesCursor !== undefined && outcome.status < 400) body.changesCursor = changesCursor
  return { status: outcome.status, body }
}

/** The schema with the tool's own defaults where they differ from the route's, so `tools/list` tells the agent what it gets. */
function withDefaults(schema: TSchema, defaults: Record<string, unknown>): TSchema {
  const properties = { ...propertiesOf(schema) }
  for (const [name, value] of Object.entries(defaults)) {
    const property = properties[name] as (TSchema & { description?: string }) | undefined
    if (!property) continue
    properties[name] = { ...property, default: value, description: property.description?.replace(/default [\w.-]+/, `default ${value}`) } as TSchema
  }
  return t.Object(properties, { additionalProperties: false })
}

/**
 * Every argument with a description (CONTRACT §17): the route schema's, else the one
 * arguments.ts gives for the name on this kind of resource. An argument described nowhere is a
 * mistake in this file, found when the tools are built.
 */
function described(tool: string, resource: string, schema: TSchema): TSchema {
  const properties: Properties = {}
  for (const [name, property] of Object.entries(propertiesOf(schema))) {
    const description = argumentDescription(resource, name, property)
    if (description === undefined) throw new Error(`MCP tool ${tool}: argument ${name} has no description`)
    properties[name] = { ...property, description } as TSchema
  }
  return { ...schema, properties } as TSchema
}

/** What a tool answers with on success: the route's response body, with `changesCursor` where REST sends X-Changes-Cursor. */
function outputOf(route: AnyRoute): TSchema {
  const response = route.response as TSchema
  if (!route.responseHeaders?.['X-Changes-Cursor']) return response
  const changesCursor = t.String({ description: 'the feed position of this answer: pass it as cursor to get_changes later (REST: X-Changes-Cursor)' })
  return t.Object({ ...propertiesOf(response), changesCursor }, { additionalProperties: false, title: (response as { title?: string }).title })
}

/** An object schema that is one of `schemas`: the root stays an object, as MCP wants of an output schema. */
const eitherObject = (...schemas: TSchema[]): TSchema => ({ type: 'object', anyOf: schemas }) as unknown as TSchema

interface DirectOptions {
  /** Query values used when the agent sends none (list tools: `limit` 50). */
  defaults?: Record<string, unknown>
  /** What the arguments are about, for their descriptions (arguments.ts): `account`, `transaction`, … */
  resource?: string
  /** For a POST that writes nothing (test_rule). */
  readOnly?: boolean
}

/** A tool that is one route, its arguments split into path, query and body as the route declares them. */
function direct(routes: readonly AnyRoute[], name: string, operationId: string, title: string, description: string, options: DirectOptions = {}): ToolSpec {
  const route = routeOf(routes, operationId)
  const isWrite = isWriteMethod(route.method)
  return {
    name,
    title,
    description,
    routes: [route],
    input: described(name, options.resource ?? '', withDefaults(merged(route.params, route.query, route.body), options.defaults ?? {})),
    output: outputOf(route),
    readOnly: options.readOnly ?? route.method === 'GET',
    destructive: false,
    run(call, args) {
      const query = pick(args, route.query)
      // Only an absent argument takes the default: null is a value the route refuses, as any other wrong type.
      if (query) for (const [name, value] of Object.entries(options.defaults ?? {})) if (query[name] === undefined) query[name] = value
      const params = pick(args, route.params) as Record<string, string> | undefined
      return run(call, route, { params, query, body: isWrite ? bodyOf(args, route.params) : undefined })
    },
  }
}

const ConfirmToken = t.Optional(t.String({ description: 'the confirmToken from this tool’s plan; without it the tool only plans' }))
const Issued = {
  confirmToken: t.Optional(t.String({ description: 'present on a plan or dry run that may go ahead: call again with it within 5 minutes to act' })),
  expiresAt: t.Optional(Type.Integer({ description: 'when the confirmToken expires, epoch milliseconds' })),
}

/**
 * Two steps for what cannot be undone (delete) or should be looked at first (archive): the
 * first call reads the target and returns a plan with a confirmToken; a second call with the
 * token acts, unless the target changed since (the token is then refused; ask for a new plan).
 */
function confirmed(
  routes: readonly AnyRoute[],
  spec: { name: string; title: string; description: string; read: string; act: string; idParam: string; resource: 'transaction' | 'account'; plan: string },
): ToolSpec {
  const read = routeOf(routes, spec.read)
  const act = routeOf(routes, spec.act)
  const plan = t.Object(
    {
      plan: t.String({ description: 'what the second call will do' }),
      target: propertiesOf(read.response as TSchema).data as TSchema,
      confirmToken: t.String({ description: 'call again with it within 5 minutes to act' }),
      expiresAt: Type.Integer({ description: 'when the confirmToken expires, epoch milliseconds' }),
    },
    { additionalProperties: false, title: 'Plan' },
  )
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    routes: [read, act],
    input: described(spec.name, spec.resource, merged(act.params, t.Object({ confirmToken: ConfirmToken }))),
    output: eitherObject(plan, act.response as TSchema),
    readOnly: false,
    destructive: true,
    run(call, args) {
      const id = args[spec.idParam]
      const params = { [spec.idParam]: typeof id === 'string' ? id : '' }
      const ownerId = call.auth.subject.id
      const version = () => entityVersion(call.platform.tenants.get(ownerId), spec.resource, params[spec.idParam] as string)
      const token = args.confirmToken
      if (typeof token !== 'string') {
        const current = run(call, read, { params })
        if (current.status >= 400) return current
        const issued = issueConfirmToken(ownerId, spec.name, params[spec.idParam] as string, version())
        return {
          status: 200,
          body: { plan: spec.plan, target: current.body.data, ...issued },
          summary: `Plan only, nothing changed. ${spec.plan} To go ahead, call ${spec.name} again with confirmToken within 5 minutes.`,
        }
      }
      const check = checkConfirmToken(token, ownerId, spec.name, params[spec.idParam] as string, version())
      if (check !== 'ok') return refusedToken(call, spec.name, check)
      return run(call, act, { params })
    },
  }
}

function refusedToken(call: ToolCall, tool: string, why: 'expired' | 'stale'): ToolResult {
  const detail =
    why === 'expired'
      ? `confirmToken: expired (valid 5 minutes); call ${tool} without confirmToken for a new plan`
      : `confirmToken: not valid for this target as it is now (it changed since the plan, or the token is for another call); call ${tool} without confirmToken for a new plan`
  return { status: 409, body: problemBody('confirmation_required', detail, call.state.requestId) as unknown as Record<string, unknown> }
}

const digestOf = (value: unknown) => new Bun.CryptoHasher('sha256').update(canonicalJson(value)).digest('base64url')

/** import_transactions: a dry run first (with a token when every item passes), the real batch only with that token. */
function importTool(routes: readonly AnyRoute[]): ToolSpec {
  const route = routeOf(routes, 'importTransactions')
  const properties = propertiesOf(route.body)
  return {
    name: 'import_transactions',
    title: 'Import transactions (dry run, then confirm)',
    description: `Upserts up to 500 transactions by your externalId, all or nothing. ${SIGN_CONVENTION} Each item may carry splits and tags as upsert_transaction says. Without confirmToken this is a dry run: it reports what each item would do (created, updated, unchanged, skipped_deleted) or its errors, writes nothing, and returns a confirmToken when every item passes. Call again with the same items and that confirmToken to import. ${RULES_NOTE}`,
    routes: [route],
    input: described(
      'import_transactions',
      'transaction',
      t.Object(
        {
          items: properties.items as TSchema,
          ifDeleted: properties.ifDeleted as TSchema,
          applyRules: properties.applyRules as TSchema,
          confirmToken: ConfirmToken,
        },
        { additionalProperties: false },
      ),
    ),
    checked: t.Object(
      {
        items: TransactionBatchEnvelope.properties.items,
        ifDeleted: properties.ifDeleted as TSchema,
        applyRules: properties.applyRules as TSchema,
        confirmToken: ConfirmToken,
      },
      { additionalProperties: false },
    ),
    output: t.Object({ ...propertiesOf(route.response as TSchema), ...Issued }, { additionalProperties: false }),
    readOnly: false,
    destructive: false,
    run(call, args) {
      const { confirmToken, ...rest } = args
      // `ifDeleted: "recreate"` and `applyRules: false` are the defaults, spelt out or not: the same import either way.
      const batch = {
        items: rest.items,
        ...(rest.ifDeleted === undefined || rest.ifDeleted === 'recreate' ? {} : { ifDeleted: rest.ifDeleted }),
        ...(rest.applyRules === undefined || rest.applyRules === false ? {} : { applyRules: rest.applyRules }),
      }
      const digest = digestOf(batch)
      const ownerId = call.auth.subject.id
      // What the dry run reported holds for the ledger as it was: any change since (this very
      // import included) voids the token, so it acts once and never on a ledger it did not see.
      const ledgerVersion = () => String(lastSeq(call.platform.tenants.get(ownerId)))
      if (typeof confirmToken !== 'string') {
        const dry = run(call, route, { body: { ...batch, dryRun: true } })
        if (dry.status >= 400) return dry
        const failed = (dry.body.summary as { failed?: number } | undefined)?.failed ?? 0
        if (failed > 0) return { ...dry, summary: `Dry run: ${failed} item(s) would fail; nothing was written. Fix them and run the dry run again.` }
        const issued = issueConfirmToken(ownerId, 'import_transactions', digest, ledgerVersion())
        return {
          status: 200,
          body: { ...dry.body, ...issued },
          summary: 'Dry run only, nothing written. To import, call import_transactions again with the same items and this confirmToken within 5 minutes.',
        }
      }
      const check = checkConfirmToken(confirmToken, ownerId, 'import_transactions', digest, ledgerVersion())
      if (check !== 'ok') return refusedToken(call, 'import_transactions', check)
      return run(call, route, { body: batch })
    },
  }
}

/**
 * import_file: a bank statement file through the import route (CONTRACT §24), a dry run first
 * (with a token when every row passes and the dates are not ambiguous), the real import only
 * with that token, as import_transactions.
 */
function importFileTool(routes: readonly AnyRoute[]): ToolSpec {
  const route = routeOf(routes, 'importStatement')
  const body = (route.body as { properties: Record<string, TSchema> }).properties
  const { dryRun: _dryRun, ...options } = body
  const input = t.Object(
    { ...(route.params as { properties: Record<string, TSchema> }).properties, ...options, confirmToken: ConfirmToken },
    { additionalProperties: false },
  )
  return {
    name: 'import_file',
    title: 'Import a bank statement file (dry run, then confirm)',
    description: `Imports a bank's statement file (CSV, OFX/QFX, QIF or camt.053; up to 5,000 rows) into one account: send its text as \`content\` (or its bytes as \`contentBase64\`). ${SIGN_CONVENTION} Rows are matched by ids made from the bank's own, so importing a file again, or an overlapping one, changes nothing twice. Without confirmToken this is a dry run: it shows how each row was read (date, amount, payee), what it would do (created, updated, unchanged, skipped_deleted, duplicate_in_file) or its errors, writes nothing, and returns a confirmToken when every row passes and the dates are not ambiguous (else send dateFormat). Call again with the same arguments and that confirmToken to import.`,
    routes: [route],
    input: described('import_file', 'import', input),
    output: t.Object({ ...propertiesOf(route.response as TSchema), ...Issued }, { additionalProperties: false }),
    readOnly: false,
    destructive: false,
    async run(call, args) {
      const { confirmToken, accountId, ...rest } = args
      const params = { accountId: typeof accountId === 'string' ? accountId : '' }
      const request = withoutKeys(args, new Set(['confirmToken', 'accountId']))
      const digest = new Bun.CryptoHasher('sha256').update(canonicalJson({ accountId: params.accountId, ...rest })).digest('base64url')
      const ownerId = call.auth.subject.id
      const ledgerVersion = () => String(lastSeq(call.platform.tenants.get(ownerId)))
      const invocation = (dryRun: boolean): Invocation => ({ params, body: dryRun ? { ...request, dryRun: true } : request })
      if (typeof confirmToken !== 'string') {
        const dry = resultOf(await invokePrepared(call.platform, route, call.state, call.auth, invocation(true)))
        if (dry.status >= 400) return dry
        const data = dry.body.data as { summary?: { failed?: number }; detected?: { dateFormatAmbiguous?: boolean } } | undefined
        const failed = data?.summary?.failed ?? 0
        if (failed > 0)
          return { ...dry, summary: `Dry run: ${failed} row(s) would fail; nothing was written. Fix the file or the options and run the dry run again.` }
        if (data?.detected?.dateFormatAmbiguous) {
          return {
            ...dry,
            summary:
              'Dry run: the dates are ambiguous (no day is above 12); nothing was written. Ask the user which order the bank writes and send dateFormat (DD/MM/YYYY or MM/DD/YYYY).',
          }
        }
        const issued = issueConfirmToken(ownerId, 'import_file', digest, ledgerVersion())
        return {
          status: 200,
          body: { ...dry.body, ...issued },
          summary: 'Dry run only, nothing written. To import, call import_file again with the same arguments and this confirmToken within 5 minutes.',
        }
      }
      const check = checkConfirmToken(confirmToken, ownerId, 'import_file', digest, ledgerVersion())
      if (check !== 'ok') return refusedToken(call, 'import_file', check)
      return resultOf(await invokePrepared(call.platform, route, call.state, call.auth, invocation(false)))
    },
  }
}

/**
 * bulk_update_transactions: up to 20 items act at once; more are planned first (a dry run that
 * shows each transaction as it would be, and a confirmToken), and act only with that token,
 * while none of the transactions changed since the plan.
 */
function bulkTool(routes: readonly AnyRoute[]): ToolSpec {
  const route = routeOf(routes, 'bulkUpdateTransactions')
  const properties = propertiesOf(route.body)
  return {
    name: 'bulk_update_transactions',
    title: 'Change many transactions at once (above 20: plan, then confirm)',
    description: `Changes up to 500 transactions in one call, all or nothing, each as update_transaction would. Send \`patch\` (the fields to set on every item, e.g. {"categoryId": "cat_…"}) and \`items\` [{transactionId, patch?}], an item’s own patch laid over the shared one. Up to ${BULK_CONFIRM_ABOVE} items act at once. With more, a call without confirmToken is a dry run: it reports what each transaction would become (or its errors), writes nothing, and returns a confirmToken when every item passes; call again with the same patch, items and that confirmToken to apply. ${SIGN_CONVENTION}`,
    routes: [route],
    input: described(
      'bulk_update_transactions',
      'transaction',
      t.Object({ patch: properties.patch as TSchema, items: properties.items as TSchema, confirmToken: ConfirmToken }, { additionalProperties: false }),
    ),
    output: t.Object({ ...propertiesOf(route.response as TSchema), ...Issued }, { additionalProperties: false }),
    readOnly: false,
    destructive: false,
    run(call, args) {
      const { confirmToken, ...body } = args
      const items = Array.isArray(body.items) ? (body.items as { transactionId?: unknown }[]) : []
      if (items.length <= BULK_CONFIRM_ABOVE && confirmToken === undefined) return run(call, route, { body })
      const ownerId = call.auth.subject.id
      const digest = digestOf(body)
      // The token holds while the transactions it names are as the plan saw them.
      const targetsVersion = () => {
        const tenant = call.platform.tenants.get(ownerId)
        return digestOf(items.map((item) => (typeof item.transactionId === 'string' ? entityVersion(tenant, 'transaction', item.transactionId) : '')))
      }
      if (typeof confirmToken !== 'string') {
        const dry = run(call, route, { body: { ...body, dryRun: true } })
        if (dry.status >= 400) return dry
        const failed = (dry.body.summary as { failed?: number } | undefined)?.failed ?? 0
        if (failed > 0) return { ...dry, summary: `Dry run: ${failed} item(s) would fail; nothing was written. Fix them and run the dry run again.` }
        const issued = issueConfirmToken(ownerId, 'bulk_update_transactions', digest, targetsVersion())
        return {
          status: 200,
          body: { ...dry.body, ...issued },
          summary: `Dry run only, nothing written: ${items.length} transactions as they would be. To apply, call bulk_update_transactions again with the same patch and items and this confirmToken within 5 minutes.`,
        }
      }
      const check = checkConfirmToken(confirmToken, ownerId, 'bulk_update_transactions', digest, targetsVersion())
      if (check !== 'ok') return refusedToken(call, 'bulk_update_transactions', check)
      return run(call, route, { body })
    },
  }
}

/** A money argument as the route's query takes it: a JSON number keeps the text it was written as, never a double's. */
const MoneyArgument = (description: string) =>
  t.Union([t.Number(), t.String({ pattern: '^-?\\d+(\\.\\d+)?$' })], { description: `${description}; an exact decimal (a number or a string such as "12.50")` })

/**
 * search_transactions: GET /v1/transactions with an agent's words for two of its filters:
 * `uncategorized: true` is `categoryId=none`, `text` is `q`; amounts may come as numbers.
 */
function searchTool(routes: readonly AnyRoute[]): ToolSpec {
  const route = routeOf(routes, 'listTransactions')
  const tool = direct(
    routes,
    'search_transactions',
    'listTransactions',
    'Search transactions',
    `Transactions, newest first, filtered by account, category or payee (a split transaction's legs count), tag, date range, amount range, text or externalId; \`uncategorized: true\` finds those still needing a category (transfers aside). ${SIGN_CONVENTION} ${LIST_NOTE} A page may hold fewer items than asked, even none, while hasMore is true (a text or amount filter tests a bounded number of rows per call): keep following nextCursor.`,
    { ...LIST_DEFAULTS, resource: 'search' },
  )
  const { q, ...filters } = propertiesOf(tool.input)
  const input = described(
    'search_transactions',
    'search',
    t.Object(
      {
        ...filters,
        uncategorized: t.Optional(
          t.Boolean({
            description: 'true: only transactions without a category (not split and not a transfer), or split with a leg without one; instead of categoryId',
          }),
        ),
        text: q as TSchema,
        minAmount: t.Optional(MoneyArgument('the smallest amount, inclusive (expenses positive, income negative)')),
        maxAmount: t.Optional(MoneyArgument('the largest amount, inclusive (expenses positive, income negative)')),
      },
      { additionalProperties: false },
    ),
  )
  return {
    ...tool,
    input,
    run(call, args) {
      const { uncategorized, text, ...rest } = args
      if (uncategorized === true && rest.categoryId !== undefined) {
        return {
          status: 422,
          body: problemBody('validation_failed', 'send uncategorized or categoryId, not both', call.state.requestId) as unknown as Record<string, unknown>,
        }
      }
      const query: Record<string, unknown> = { ...rest }
      if (uncategorized === true) query.categoryId = 'none'
      if (text !== undefined) query.q = text
      // A number is read from the text the agent wrote (1e-8 too), exactly, and passed on in plain digits.
      for (const name of ['minAmount', 'maxAmount']) {
        if (typeof args[name] !== 'number') continue
        const units = unitsFromLexeme(numberSource(args, name))
        if (typeof units === 'string') {
          return {
            status: 422,
            body: problemBody('validation_failed', `argument '${name}' ${units}`, call.state.requestId) as unknown as Record<string, unknown>,
          }
        }
        query[name] = decimalOfUnits(units.toString())
      }
      if (query.limit === undefined) query.limit = 50
      return run(call, route, { query })
    },
  }
}

/** Every tool, in the order `tools/list` shows them. */
export function buildTools(routes: readonly AnyRoute[]): ToolSpec[] {
  return [
    direct(
      routes,
      'get_context',
      'getAgentContext',
      'Read the owner’s context',
      `Read this first. The profile, accounts, custom categories (system ones summarised as id, fullName and type; systemCategories: "full" for every field), the 20 most-used payees, the tags, the rules, the import presets, the 20 newest transactions (raise payeeLimit / recentTransactionLimit for more) and, with budgets:read, this month’s budget, in one consistent snapshot, and changesCursor: pass it to get_changes later to see what changed since. ${SIGN_CONVENTION}`,
      // Smaller than REST's: an agent's context is precious, and it can ask for more.
      { defaults: { payeeLimit: 20, recentTransactionLimit: 20, systemCategories: 'summary' }, resource: 'context' },
    ),
    direct(routes, 'list_accounts', 'listAccounts', 'List accounts', `Accounts, oldest first, with current balances. ${LIST_NOTE}`, LIST_DEFAULTS),
    direct(routes, 'list_categories', 'listCategories', 'List categories', `System and custom categories. ${LIST_NOTE}`, LIST_DEFAULTS),
    direct(
      routes,
      'find_payees',
      'listPayees',
      'Find payees',
      `Payees whose name or alias contains \`q\` (case- and accent-insensitive). ${LIST_NOTE}`,
      LIST_DEFAULTS,
    ),
    direct(
      routes,
      'list_tags',
      'listTags',
      'List tags',
      `Tags (labels on transactions, such as a trip), oldest first; archived ones with includeArchived. ${LIST_NOTE}`,
      LIST_DEFAULTS,
    ),
    direct(
      routes,
      'list_rules',
      'listRules',
      'List rules',
      `The owner’s rules (conditions on a transaction’s bank text, payee, note, amount or account, and the fields they fill in), in the order they run. ${LIST_NOTE}`,
      { ...LIST_DEFAULTS, resource: 'rule' },
    ),
    direct(
      routes,
      'test_rule',
      'testRule',
      'Try a rule on past transactions',
      `Shows which transactions of a date range a rule (\`rule\`, as upsert_rule takes it, or a saved \`ruleId\`) would change, before and after; writes nothing. ${SIGN_CONVENTION}`,
      { readOnly: true, resource: 'rule' },
    ),
    searchTool(routes),
    direct(routes, 'get_transaction', 'getTransaction', 'Get a transaction', `One transaction by id. ${SIGN_CONVENTION}`),
    direct(
      routes,
      'spending_summary',
      'getSpendingReport',
      'Summarise spending over a date range',
      `What went out and came in between from and to (inclusive), by category, payee or month, per currency (never converted), exact: spent (expenses), received (income, as a positive number), net and transactionCount per group. Transfers are left out; a split transaction counts by its legs. Returns at most \`limit\` groups (default 50), largest spending first (months in order); omittedGroups counts the rest. ${SIGN_CONVENTION}`,
      { defaults: { limit: 50 }, resource: 'report' },
    ),
    direct(
      routes,
      'get_changes',
      'listChanges',
      'What changed since a cursor',
      `Changes since \`cursor\` (absent: from the beginning), deletions included (\`op: "delete"\`), each entity once at its latest state. Store \`nextCursor\`; call again while \`hasMore\`. A \`cursor_expired\` error means: call again without cursor. ${SIGN_CONVENTION}`,
      LIST_DEFAULTS,
    ),
    direct(
      routes,
      'get_budget',
      'getBudget',
      'Read a month’s budget',
      'A month (YYYY-MM): per planned category, planned, spent and remaining, with totals and what is uncategorized; includeUnplanned also lists every category with spending but no plan. Spent is computed by pfin, exactly: split transactions count by leg, transfers never count, a category includes the categories below it, and accounts in other currencies are reported in otherCurrencies, never converted. Amounts use pfin’s sign: positive is money out, negative money in (income is planned and received negative); remaining = planned − spent.',
      { resource: 'budget' },
    ),
    direct(
      routes,
      'list_upcoming',
      'listUpcomingOccurrences',
      'Upcoming scheduled transactions',
      `Every active schedule’s occurrences from today (UTC) for \`days\` days (default 30), by date: the bills and income to expect, each with its status (expected, posted with the transactionId that counts for it, skipped). ${SIGN_CONVENTION}`,
      { resource: 'schedule' },
    ),
    direct(
      routes,
      'upsert_account',
      'upsertAccount',
      'Create or update an account',
      'Creates the account with your externalId, or updates the one that has it: calling again with the same input changes nothing. `balance` is set outright, so use update_account to rename or change other fields.',
      { resource: 'account' },
    ),
    direct(
      routes,
      'update_account',
      'updateAccount',
      'Change an account',
      'Changes only the fields you send of one account (by its id), as PATCH does: a rename or a new color never touches the balance. Send `balance` only to reconcile it with the bank (it is set outright). Send null to clear a nullable field.',
      { resource: 'account' },
    ),
    direct(
      routes,
      'upsert_category',
      'upsertCategory',
      'Create or update a category',
      'Creates or updates a custom category by your externalId; safe to repeat.',
      { resource: 'category' },
    ),
    direct(
      routes,
      'update_category',
      'updateCategory',
      'Change a category',
      'Changes only the fields you send of one custom category (by its id): rename it, move it under another parent (null: top level), change its type, icon or color. System categories are read-only.',
      { resource: 'category' },
    ),
    direct(routes, 'upsert_payee', 'upsertPayee', 'Create or update a payee', 'Creates or updates a payee by your externalId; safe to repeat.', {
      resource: 'payee',
    }),
    direct(
      routes,
      'update_payee',
      'updatePayee',
      'Change a payee',
      'Changes only the fields you send of one payee (by its id): rename it, replace its aliases (the spellings bank statements use), or set the category its new transactions take. Its totals are kept.',
      { resource: 'payee' },
    ),
    direct(
      routes,
      'upsert_tag',
      'upsertTag',
      'Create or update a tag',
      'Creates or updates a tag by your externalId; safe to repeat. Names are unique ignoring case, accents and spaces. Transactions can also name tags directly with tagNames.',
      { resource: 'tag' },
    ),
    direct(
      routes,
      'upsert_rule',
      'upsertRule',
      'Create or update a rule',
      'Creates or updates a rule by your externalId; safe to repeat. A rule fills in categoryId, payeeName or note, or adds tagNames, on transactions written with applyRules: true, never over a field the write sends. Text conditions ignore case and accents; `matches` takes a glob (`*` any run, `?` one character). Try a rule with test_rule first.',
      { resource: 'rule' },
    ),
    direct(
      routes,
      'upsert_transaction',
      'upsertTransaction',
      'Create or update a transaction',
      `Creates the transaction with your externalId, or updates the one that has it: calling again with the same input changes nothing. ${SIGN_CONVENTION} Use payeeName to find or create the payee by name. ${SPLITS_AND_TAGS}`,
      { resource: 'transaction' },
    ),
    direct(
      routes,
      'update_transaction',
      'updateTransaction',
      'Change a transaction',
      `Changes the fields you send of one transaction (by its id); balances and payee totals follow. ${SIGN_CONVENTION} Send null to clear a nullable field. To change many transactions, use bulk_update_transactions. ${SPLITS_AND_TAGS}`,
      { resource: 'transaction' },
    ),
    bulkTool(routes),
    importTool(routes),
    direct(
      routes,
      'set_budget',
      'setBudgetCategory',
      'Plan one category’s amount for a month',
      'Sets the planned amount of one category for one month (YYYY-MM), replacing its entry (a note not sent is cleared); planned 0 removes it. The other categories of the month keep theirs, and calling again with the same input changes nothing. Amounts are exact decimals in the owner’s defaultCurrency, in pfin’s sign: plan spending positive, income negative. Archived categories take no new amount.',
      { resource: 'budget' },
    ),
    direct(
      routes,
      'upsert_schedule',
      'upsertSchedule',
      'Create or update a schedule',
      `Creates or updates a recurring transaction by your externalId; safe to repeat. \`recurrence\` says when: freq (daily, weekly, monthly, yearly), interval, start, and optionally byMonthDay (1–31, -1 = last day; 29–31 fall on a shorter month’s last day), byWeekday (MO…SU, or 2WE / -1FR in a monthly rule), until or count, weekendAdjust (before / after moves a weekend date to Friday / Monday). With autoPost: true pfin records each occurrence’s transaction on its date, from today on; a bank row that later arrives for it adopts that transaction instead of doubling it. ${SIGN_CONVENTION}`,
      { resource: 'schedule' },
    ),
    importFileTool(routes),
    confirmed(routes, {
      name: 'delete_transaction',
      title: 'Delete a transaction (plan, then confirm)',
      description: `Deletes one transaction permanently and reverses its effect on balances and payee totals. Without confirmToken it only returns the transaction and a confirmToken (valid 5 minutes, void if the transaction changes); call again with it to delete. ${SIGN_CONVENTION}`,
      read: 'getTransaction',
      act: 'deleteTransaction',
      idParam: 'transactionId',
      resource: 'transaction',
      plan: 'The transaction below will be deleted permanently; its effect on balances and payee totals will be reversed.',
    }),
    confirmed(routes, {
      name: 'archive_account',
      title: 'Archive an account (plan, then confirm)',
      description:
        'Archives one account (it stays readable with its transactions; lists hide it by default). Without confirmToken it only returns the account and a confirmToken (valid 5 minutes, void if the account changes); call again with it to archive.',
      read: 'getAccount',
      act: 'archiveAccount',
      idParam: 'accountId',
      resource: 'account',
      plan: 'The account below will be archived; its balance and transactions stay as they are.',
    }),
  ]
}

/**
 * The arguments checked against the tool's schema before it runs, every problem named at once
 * as REST names a body's (CONTRACT §6). The SDK hands arguments over unchecked
 * (schema.ts), and a tool passes a route only the names it declares: a misspelt filter
 * (`account_id`) would be dropped and the agent would take the unfiltered list for a filtered
 * one. What passes here passes the route's own checks, which still run.
 */
export function argumentProblem(tool: ToolSpec, args: Record<string, unknown>, requestId: string): ToolResult | undefined {
  const issues = new Issues()
  // An object whose prototype is not Object's was given one by a `__proto__` key along the way.
  const prototype = Object.getPrototypeOf(args)
  if (prototype !== Object.prototype && prototype !== null && !Object.hasOwn(args, '__proto__')) {
    issues.add('unknown', () => "argument '__proto__' is not allowed")
  }
  addIssues(issues, tool.checked ?? tool.input, args, (error) => describeError(error, 'arguments', args), 'the arguments are invalid')
  if (issues.count === 0) return undefined
  return { status: 422, body: problemBody('validation_failed', issues.detail(), requestId) as unknown as Record<string, unknown> }
}

/** Whether the key may use the tool: it may call every route the tool runs. */
export function allowed(tool: ToolSpec, auth: AuthContext): boolean {
  return tool.routes.every((route) => mayCall(auth.principal.scopes, route))
}
