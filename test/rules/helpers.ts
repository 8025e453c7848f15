import type { TestServer } from '../support/harness.ts'
import { createAccount, type Json } from '../transactions/helpers.ts'

/** Shared helpers for the rules tests (CONTRACT §23): real HTTP against a real server. */

export type { Json }

export const RULE_FIELDS = ['id', 'externalId', 'name', 'priority', 'isActive', 'match', 'conditions', 'actions', 'stopProcessing', 'createdAt', 'updatedAt']

export async function newRule(server: TestServer, key: string, body: Json): Promise<Json> {
  const res = await server.request('POST', '/v1/rules', { key, body })
  if (res.status !== 201) throw new Error(`rule create: ${res.status} ${res.text}`)
  return res.json.data
}

export async function newCategory(server: TestServer, key: string, name: string): Promise<Json> {
  const res = await server.request('POST', '/v1/categories', { key, body: { name, type: 'expense' } })
  if (res.status !== 201) throw new Error(`category create: ${res.status} ${res.text}`)
  return res.json.data
}

/** An owner with one account and two custom categories, for rules to name. */
export async function ledger(server: TestServer, owner?: Parameters<TestServer['owner']>[0]) {
  const made = await server.owner(owner)
  const account = await createAccount(server, made.key)
  const coffee = await newCategory(server, made.key, 'Coffee')
  const groceries = await newCategory(server, made.key, 'Groceries')
  return { owner: made, key: made.key, account: account.id as string, coffee: coffee.id as string, groceries: groceries.id as string }
}

/** A rule body: one condition, one action. */
export const when = (field: string, op: string, value: unknown, set: string, to: unknown, extra: Json = {}): Json => ({
  name: `${field} ${op} ${JSON.stringify(value)}`,
  conditions: [{ field, op, ...(value === undefined ? {} : { value }) }],
  actions: [{ set, value: to }],
  ...extra,
})

export async function post(server: TestServer, key: string, path: string, body: Json): Promise<Json> {
  const res = await server.request('POST', path, { key, body })
  if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${res.text}`)
  return res.json
}
