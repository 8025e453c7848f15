import { compileRule, runRules } from '../../src/modules/rules/engine.ts'
import type { ActionField } from '../../src/modules/rules/model.ts'
import type { Benchmark } from './benchmark.ts'
import { postOnce } from './keyed-load.ts'
import { Cleanup, fmt, median, settings, startPfinWithOwner } from './support.ts'

/**
 * Rules (CONTRACT §23), what they cost:
 * - a batch of 500 new items with `applyRules: true` against the same without, under 200 rules
 *   of two conditions each (a text and an amount), over bank texts of ~40 characters:
 *   interleaved rounds, the median round's ratio (target: rules add at most 2× the batch);
 * - `rules apply` changing 5,000 transactions, and `rules test` over the same 5,000 when none
 *   would change (each update made and undone);
 * - in-process, the engine alone: the realistic 200 rules, and the worst an owner can build
 *   (200 rules × 10 conditions that all hold over 2,000-character texts), per transaction.
 */

const TARGET = 2
const ITEMS = 500
const RULES = 200

async function post(url: string, key: string, path: string, body: unknown): Promise<{ ms: number; json: { data: unknown; summary?: unknown } }> {
  const started = performance.now()
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  const ms = performance.now() - started
  if (response.status !== 200 && response.status !== 201) throw new Error(`POST ${path} answered ${response.status}: ${text.slice(0, 300)}`)
  return { ms, json: JSON.parse(text) }
}

const rows = (accountId: string, prefix: string, date = '2026-06-01') =>
  Array.from({ length: ITEMS }, (_, n) => ({
    externalId: `${prefix}-${n}`,
    accountId,
    amount: 1 + (n % 90),
    date,
    originalDescription: `CARD PAYMENT ${n} SHOP ${n % 300} LISBOA PT`,
  }))

/** Milliseconds per transaction for `rules` over `text`, the median of a few timed runs after a warm-up. */
function enginePerTransaction(conditions: (rule: number) => { field: string; op: string; value: string; valueTo: null }[], text: string): number {
  const rules = Array.from({ length: RULES }, (_, r) =>
    compileRule({ id: `rul_${r}`, match: 'all', conditions: conditions(r), actions: [{ set: 'note', value: 'x' }], stopProcessing: false }),
  )
  const facts = { originalDescription: text, payeeName: null, note: null, amount: 100000000n, accountId: 'acct_x' }
  const free = new Set<ActionField>(['note'])
  for (let i = 0; i < 3; i++) runRules(rules, facts, free)
  const times: number[] = []
  for (let i = 0; i < 9; i++) {
    const started = performance.now()
    runRules(rules, facts, free)
    times.push(performance.now() - started)
  }
  return median(times)
}

export const benchmark: Benchmark = {
  name: 'rules',
  description: `batches of ${ITEMS} with and without applyRules under ${RULES} rules (target: ≤ ${TARGET}×), rules apply/test over 5,000 transactions, the engine's worst case`,
  async run() {
    const cleanup = new Cleanup()
    try {
      const { pfin, key } = await startPfinWithOwner(cleanup)
      const account = await postOnce(pfin.url, key, '/v1/accounts', { name: 'Bench', type: 'bank', balance: 1_000_000, currency: 'EUR' })
      const category = await postOnce(pfin.url, key, '/v1/categories', { name: 'Shops', type: 'expense' })
      let lastRule = ''
      for (let r = 0; r < RULES; r++) {
        lastRule = (
          await postOnce(pfin.url, key, '/v1/rules', {
            name: `shop ${r}`,
            conditions: [
              { field: 'originalDescription', op: 'contains', value: `shop ${r} ` },
              { field: 'amount', op: 'between', value: 0, valueTo: 1000 },
            ],
            actions: [{ set: 'categoryId', value: category.id }],
          })
        ).id
      }
      const run = Date.now().toString(36)
      await post(pfin.url, key, '/v1/transactions/batch', { items: rows(account.id, `${run}-warm-a`), applyRules: true })
      await post(pfin.url, key, '/v1/transactions/batch', { items: rows(account.id, `${run}-warm-b`) })
      const rounds = Math.max(5, settings.rounds)
      const ratios: number[] = []
      const withMs: number[] = []
      const withoutMs: number[] = []
      for (let round = 1; round <= rounds; round++) {
        const order = round % 2 ? [true, false] : [false, true]
        const ms: Record<string, number> = {}
        for (const applyRules of order) {
          ms[String(applyRules)] = (
            await post(pfin.url, key, '/v1/transactions/batch', { items: rows(account.id, `${run}-r${round}-${applyRules}`), applyRules })
          ).ms
        }
        const [on, off] = [ms.true as number, ms.false as number]
        withMs.push(on)
        withoutMs.push(off)
        ratios.push(on / off)
        console.log(`round ${round}: with rules ${fmt.ms(on).padStart(10)}   without ${fmt.ms(off).padStart(10)}   ratio ${fmt.ratio(on / off)}`)
      }
      const ratio = median(ratios)

      // 5,000 transactions of one day, then one rule over them (in place of one of the 200: the cap).
      await fetch(`${pfin.url}/v1/rules/${lastRule}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } })
      for (let part = 0; part < 10; part++) await post(pfin.url, key, '/v1/transactions/batch', { items: rows(account.id, `${run}-day-${part}`, '2026-07-01') })
      const rule = await postOnce(pfin.url, key, '/v1/rules', {
        name: 'card payments',
        conditions: [{ field: 'originalDescription', op: 'startsWith', value: 'card payment' }],
        actions: [{ set: 'note', value: 'card' }],
      })
      const day = { from: '2026-07-01', to: '2026-07-01' }
      const applied = await post(pfin.url, key, `/v1/rules/${rule.id}/apply`, day)
      const idle = await post(pfin.url, key, '/v1/rules/test', { ruleId: rule.id, ...day, overwrite: true })
      console.log(`rules apply, 5,000 changes: ${fmt.ms(applied.ms)}; rules test over the same 5,000, none changing: ${fmt.ms(idle.ms)}`)

      const realistic = enginePerTransaction(
        (r) => [{ field: 'originalDescription', op: 'contains', value: `shop ${r} `, valueTo: null }],
        'CARD PAYMENT 41 SHOP 299 LISBOA PT',
      )
      const long = 'a'.repeat(2000)
      const worstStar = enginePerTransaction(
        (r) =>
          Array.from({ length: 10 }, (_, c) => ({
            field: 'originalDescription',
            op: 'matches',
            value: `*${'a*'.repeat(90)}${r}${c}*`.replace(/\d/g, 'a'),
            valueTo: null,
          })),
        long,
      )
      const worstWildcard = enginePerTransaction(
        (r) =>
          Array.from({ length: 10 }, (_, c) => ({
            field: 'originalDescription',
            op: 'matches',
            value: `*${'a?'.repeat(15)}${'a'.repeat((r + c) % 2)}*`,
            valueTo: null,
          })),
        long,
      )
      console.log(
        `engine per transaction: ${RULES} realistic rules ${fmt.ms(realistic)}; worst (${RULES} × 10 conditions that hold, 2,000 characters): globs without ? ${fmt.ms(worstStar)}, with ? ${fmt.ms(worstWildcard)}`,
      )
      return {
        targetMet: ratio <= TARGET,
        summary: `batch of ${ITEMS} under ${RULES} rules: ${fmt.ms(median(withMs))} with applyRules vs ${fmt.ms(median(withoutMs))} without (median ratio ${fmt.ratio(ratio)}, target ≤ ${TARGET}); apply 5,000 ${fmt.ms(applied.ms)}; engine worst ${fmt.ms(worstWildcard)}/transaction`,
      }
    } finally {
      await cleanup.run()
    }
  },
}
