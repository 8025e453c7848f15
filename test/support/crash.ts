import { expect } from 'bun:test'
import { join } from 'node:path'
import { type Answer, call, killSoon, type ServerProcess, withDb } from './processes.ts'

/**
 * What the kill -9 tests share: a burst of requests cut by SIGKILL while writes are in flight,
 * the control database's copies of the answers lost, money as exact cents, and every item of a
 * list read back from the restarted server.
 */

export interface BurstOptions {
  /** How many requests are in flight at once. */
  concurrency: number
  /** SIGKILL the server a few milliseconds after this many answers, so the kill lands inside some write. */
  killAfterAnswers?: number
  /** SIGKILL the server this long after the burst began, wherever it is. */
  killAfterMs?: number
}

/**
 * Sends every item through `send`, `concurrency` at a time, and stops taking new items once the
 * server is killed. `send` resolves `false` for a request cut off before it was answered (it
 * does not count towards `killAfterAnswers`) and throws for an answer the test does not accept.
 * Resolves, after the kill if one was asked for, with whether the server was killed and how many
 * answers counted.
 */
export async function burst<T>(
  server: ServerProcess,
  items: readonly T[],
  send: (item: T) => Promise<unknown>,
  options: BurstOptions,
): Promise<{ killed: boolean; answered: number }> {
  const { concurrency, killAfterAnswers, killAfterMs } = options
  let next = 0
  let answered = 0
  let killed = false
  let killing = false
  const worker = async () => {
    while (!killed && next < items.length) {
      if ((await send(items[next++] as T)) === false) continue
      answered++
      if (killAfterAnswers !== undefined && answered >= killAfterAnswers && !killing) {
        killing = true
        killSoon(server, () => {
          killed = true
        })
      }
    }
  }
  const timer =
    killAfterMs === undefined
      ? undefined
      : Bun.sleep(killAfterMs).then(() => {
          killed = true
          server.proc.kill('SIGKILL')
        })
  await Promise.all([...Array.from({ length: concurrency }, worker), timer])
  return { killed, answered }
}

/**
 * The worst case of CONTRACT §11: control.db loses its copies of an owner's idempotent answers
 * (it may use synchronous=NORMAL; a crash between the owner's commit and the control copy does
 * the same). Retries must then find the answers in the owner's file. Returns how many were dropped.
 */
export function dropControlAnswers(dataDir: string, ownerId: string): number {
  return withDb(join(dataDir, 'control.db'), (db) => db.query('DELETE FROM idempotency_records WHERE owner_id = ?').run(ownerId).changes)
}

/** A count of cents as the exact decimal a client sends: -1234n → "-12.34". */
export function centsText(cents: bigint): string {
  const negative = cents < 0n
  const abs = negative ? -cents : cents
  return `${negative ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`
}

/** Creates the owner's accounts A and B (bank, EUR) with the given balances in cents, each once (its own Idempotency-Key); returns their ids. */
export async function accountsAB(
  send: (method: string, path: string, body?: string, idempotencyKey?: string) => Promise<Answer>,
  cents: Record<'A' | 'B', bigint>,
): Promise<Record<'A' | 'B', string>> {
  const ids: Record<'A' | 'B', string> = { A: '', B: '' }
  for (const name of ['A', 'B'] as const) {
    const res = await send('POST', '/v1/accounts', `{"name":"${name}","type":"bank","balance":${centsText(cents[name])},"currency":"EUR"}`, crypto.randomUUID())
    expect(res.status).toBe(201)
    ids[name] = JSON.parse(res.text).data.id
  }
  return ids
}

/** Every item of a list route of a server process, following `nextCursor` 200 at a time; every page must be 200. */
export async function everyItem<T>(url: string, key: string, path: string): Promise<T[]> {
  const items: T[] = []
  let cursor: string | null = null
  for (let pages = 0; pages < 100; pages++) {
    const res = await call(url, 'GET', `${path}?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { key })
    expect(res.status).toBe(200)
    const page = JSON.parse(res.text) as { data: T[]; hasMore: boolean; nextCursor: string | null }
    items.push(...page.data)
    if (!page.hasMore) break
    cursor = page.nextCursor
  }
  return items
}
