import type { Benchmark } from './benchmark.ts'
import { Cleanup, median, startPfinWithOwner } from './support.ts'
import { dayOf, occurrenceDays } from '../../src/modules/schedules/recurrence.ts'

/**
 * Ten years of a daily schedule's occurrences (CONTRACT §29): 3,652 dates. Two figures: the rule
 * alone (`occurrenceDays`, in this process), and `GET /v1/schedules/{id}/occurrences` for the ten
 * years over HTTP against an account holding a matching transaction on every day (3,652 rows,
 * each matched to its occurrence), so the answer walks the account's index once and matches every
 * date. Median and slowest of 20 calls each. Target: the HTTP answer's median under 50 ms (the
 * slowest call is printed beside it: on a shared machine it measures the neighbours as much).
 */

const TARGET_MS = 50
const FROM = '2016-01-01'
const TO = '2025-12-31'
const ROUNDS = 20

async function api(url: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return JSON.parse(text)
}

export const benchmark: Benchmark = {
  name: 'schedules',
  description: 'ten years of a daily schedule’s occurrences: the rule alone, and over HTTP with every date matched',
  async run() {
    const rule = { freq: 'daily', interval: 1, byMonthDay: null, byWeekday: null, start: FROM, until: null, count: null, weekendAdjust: 'none' } as const
    const engine: number[] = []
    for (let i = 0; i < ROUNDS; i++) {
      const started = performance.now()
      occurrenceDays(rule, dayOf(FROM), dayOf(TO))
      engine.push(performance.now() - started)
    }
    const cleanup = new Cleanup()
    try {
      const { pfin, key } = await startPfinWithOwner(cleanup)
      const account = (await api(pfin.url, key, 'POST', '/v1/accounts', { name: 'Daily', type: 'bank', balance: 0, currency: 'EUR' })).data.id
      const schedule = (
        await api(pfin.url, key, 'POST', '/v1/schedules', { name: 'Coffee', accountId: account, amount: 3, recurrence: { freq: 'daily', start: FROM } })
      ).data.id
      const days: string[] = []
      for (let day = dayOf(FROM); day <= dayOf(TO); day++) days.push(new Date(day * 86_400_000).toISOString().slice(0, 10))
      for (let i = 0; i < days.length; i += 500) {
        const items = days.slice(i, i + 500).map((date) => ({ externalId: `coffee-${date}`, accountId: account, amount: 3, date }))
        await api(pfin.url, key, 'POST', '/v1/transactions/batch', { items })
      }
      const path = `/v1/schedules/${schedule}/occurrences?from=${FROM}&to=${TO}`
      const first = await api(pfin.url, key, 'GET', path)
      const posted = first.data.filter((occurrence: { status: string }) => occurrence.status === 'posted').length
      const http: number[] = []
      for (let i = 0; i < ROUNDS; i++) {
        const started = performance.now()
        await api(pfin.url, key, 'GET', path)
        http.push(performance.now() - started)
      }
      const ms = (values: number[]) => `median ${median(values).toFixed(2)} ms, slowest ${Math.max(...values).toFixed(2)} ms`
      console.log(`rule alone, ${days.length} dates: ${ms(engine)}`)
      console.log(`GET occurrences, ${first.data.length} dates (${posted} posted by a matching transaction): ${ms(http)}`)
      return { targetMet: median(http) < TARGET_MS, summary: `${days.length} daily occurrences over HTTP ${ms(http)}; rule alone ${ms(engine)}` }
    } finally {
      await cleanup.run()
    }
  },
}
