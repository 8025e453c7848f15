import { afterAll, beforeAll, expect, test } from 'bun:test'
import { listPages, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { createAccount, type Json } from '../transactions/helpers.ts'
import { importFile } from './helpers.ts'

/**
 * An import keeps the bank's text as `originalDescription` and runs the owner's rules on its rows
 * unless `applyRules=false` (CONTRACT §23, §24); a rule's payee wins over the one found from the
 * text, which fills in only where no rule names one. Pins the wiring of the import to the rules.
 */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

const CSV = 'Date,Description,Amount\n2026-03-02,POS 4411 STARBUCKS LISBOA,-4.80\n2026-03-03,PINGO DOCE 12,-20.10\n'

async function setup() {
  const made = await server.owner({})
  const account = (await createAccount(server, made.key, { balance: 0 })).id as string
  const rule = await server.request('POST', '/v1/rules', {
    key: made.key,
    body: {
      name: 'Coffee',
      conditions: [{ field: 'originalDescription', op: 'contains', value: 'starbucks' }],
      actions: [
        { set: 'categoryId', value: 'cat_sys_coffee' },
        { set: 'payeeName', value: 'Starbucks' },
      ],
    },
  })
  expect(rule.status).toBe(201)
  return { key: made.key, account, ruleId: rule.json.data.id as string }
}

const byText = async (key: string) => {
  const rows: Json[] = await listPages(server, key, '/v1/transactions')
  const payees: Json[] = await listPages(server, key, '/v1/payees')
  const nameOf = (id: string | null) => payees.find((p) => p.id === id)?.name ?? null
  return Object.fromEntries(rows.map((row) => [row.originalDescription, { categoryId: row.categoryId, payee: nameOf(row.payeeId) }]))
}

test('rules run on imported rows: the bank text is kept, a rule sets category and payee, other rows get the payee found from the text', async () => {
  const { key, account, ruleId } = await setup()
  const res = await importFile(server, key, account, CSV, { format: 'csv' })
  expect(res.status).toBe(200)
  expect(res.json.data.items.map((item: Json) => item.rulesApplied)).toEqual([[ruleId], []])
  const rows = await byText(key)
  expect(rows['POS 4411 STARBUCKS LISBOA']).toEqual({ categoryId: 'cat_sys_coffee', payee: 'Starbucks' })
  expect(rows['PINGO DOCE 12']?.categoryId).toBeNull()
  expect(rows['PINGO DOCE 12']?.payee).not.toBeNull()
})

test('applyRules=false: no rule runs; the text and the payee found from it are still kept', async () => {
  const { key, account } = await setup()
  const res = await importFile(server, key, account, CSV, { format: 'csv', applyRules: false })
  expect(res.status).toBe(200)
  expect(res.json.data.items.map((item: Json) => item.rulesApplied)).toEqual([[], []])
  const rows = await byText(key)
  expect(rows['POS 4411 STARBUCKS LISBOA']?.categoryId).toBeNull()
  expect(rows['POS 4411 STARBUCKS LISBOA']?.payee).not.toBe('Starbucks')
  expect(rows['PINGO DOCE 12']?.payee).not.toBeNull()
})
