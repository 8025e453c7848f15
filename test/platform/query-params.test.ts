import { expect, test } from 'bun:test'
import { expectProblem, unthrottledServerWithKey } from '../support/harness.ts'

/**
 * On list routes, a prototype-named query parameter (`__proto__`, `constructor`, …) is an unknown
 * parameter, and a parameter given twice is refused: both 422 validation_failed naming it.
 *
 * Assigning `__proto__` would set the parsed query's prototype instead of adding a parameter, and
 * taking the last of two values would hide a client's mistake. CONTRACT §6: a bad query parameter
 * is 422 validation_failed.
 */

const fixture = unthrottledServerWithKey()

const get = (path: string) => fixture.server.request('GET', path, { key: fixture.key })

test('prototype-named parameters are unknown parameters: 422 naming them, on every list route', async () => {
  for (const route of ['/v1/accounts', '/v1/transactions', '/v1/payees', '/v1/categories', '/v1/changes']) {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const problem = expectProblem(await get(`${route}?${name}=1`), 422, 'validation_failed')
      expect({ route, name, named: problem.detail.includes(name) }).toEqual({ route, name, named: true })
    }
  }
})

test('a parameter given twice is 422 naming it, not the last value taken', async () => {
  const cases = ['/v1/accounts?limit=1&limit=2', '/v1/transactions?limit=5&from=2026-01-01&limit=6', '/v1/changes?resources=accounts&resources=payees']
  for (const path of cases) {
    const problem = expectProblem(await get(path), 422, 'validation_failed')
    expect(problem.detail).toMatch(/^Query parameter '(limit|resources)' is given more than once/)
  }
  expect((await get('/v1/accounts?limit=2')).status).toBe(200)
  expect((await get('/v1/changes?resources=accounts,payees&limit=3')).status).toBe(200)
})
