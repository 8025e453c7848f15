import { describe, expect, test } from 'bun:test'
import { unthrottledServerWithKey } from '../support/harness.ts'

/**
 * A batch dry run reports all of a failing item's errors, not only the first check's: schema,
 * money and reference errors together, and every unknown id.
 *
 * CONTRACT §16: "`dryRun: true` writes nothing and reports every item: the operation it would
 * take, or all of its errors (`data` null)"; too many decimals is a `validation_failed` of its
 * field (§4, §6) like any other. A client fixing a bank export from the dry run's report needs
 * one round trip, not one per error.
 */

const fixture = unthrottledServerWithKey()

async function dryRunErrors(item: Record<string, unknown>): Promise<{ status: number; operation: unknown; fields: (string | null)[] }> {
  const { server, key } = fixture
  const account = await server.request('POST', '/v1/accounts', { key, body: { name: 'Dry', type: 'bank', balance: 0, currency: 'EUR' } })
  const res = await server.request('POST', '/v1/transactions/batch', {
    key,
    body: { dryRun: true, items: [{ externalId: 'dry-1', accountId: account.json.data.id, amount: 1, date: '2026-11-21', ...item }] },
  })
  const result = res.json?.data?.[0] ?? {}
  return { status: res.status, operation: result.operation, fields: (result.errors ?? []).map((e: { field: string | null }) => e.field).sort() }
}

describe('a dry run reports all of a failing item’s errors (CONTRACT §16)', () => {
  test('a 2001-character note and an amount with 9 decimals: both reported', async () => {
    expect(await dryRunErrors({ note: 'x'.repeat(2001), amount: 1.123456789 })).toEqual({ status: 200, operation: null, fields: ['amount', 'note'] })
  })

  test('an unknown field and an amount with 9 decimals: both reported', async () => {
    expect(await dryRunErrors({ colour: 'red', amount: 1.123456789 })).toEqual({ status: 200, operation: null, fields: ['amount', 'colour'] })
  })

  test('an amount beyond the money range and a date that is not a date: both reported', async () => {
    expect(await dryRunErrors({ amount: 1e12, date: '2026-13-01' })).toEqual({ status: 200, operation: null, fields: ['amount', 'date'] })
  })

  test('an unknown accountId and an unknown categoryId: both reported', async () => {
    expect(await dryRunErrors({ accountId: 'acct_0190000000007000800000000000dead', categoryId: 'cat_0190000000007000800000000000dead' })).toEqual({
      status: 200,
      operation: null,
      fields: ['accountId', 'categoryId'],
    })
  })
})
