import type { TestServer } from '../support/harness.ts'
import type { Json } from '../transactions/helpers.ts'

/** Shared helpers for the budget tests (CONTRACT §27): real HTTP against a real server. */

export async function getBudget(server: TestServer, key: string, month: string, query = ''): Promise<Json> {
  const res = await server.request('GET', `/v1/budgets/${month}${query}`, { key })
  if (res.status !== 200) throw new Error(`GET budget ${month}: ${res.status} ${res.text}`)
  return res.json.data
}

export async function planCategory(server: TestServer, key: string, month: string, categoryId: string, body: Json): Promise<Json> {
  const res = await server.request('PUT', `/v1/budgets/${month}/categories/${categoryId}`, { key, body })
  if (res.status !== 200) throw new Error(`PUT budget ${month}/${categoryId}: ${res.status} ${res.text}`)
  return res.json.data
}

export async function planMonth(server: TestServer, key: string, month: string, body: Json): Promise<Json> {
  const res = await server.request('PUT', `/v1/budgets/${month}`, { key, body })
  if (res.status !== 200) throw new Error(`PUT budget ${month}: ${res.status} ${res.text}`)
  return res.json.data
}

/** One category's line of a budget, or undefined. */
export const line = (budget: Json, categoryId: string): Json => budget.categories.find((c: Json) => c.categoryId === categoryId)

/** The figures of one line that a table compares. */
export const figures = (entry: Json) =>
  entry && {
    planned: entry.planned,
    spent: entry.spent,
    remaining: entry.remaining,
    transactionCount: entry.transactionCount,
    otherCurrencies: entry.otherCurrencies,
  }
