import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { createCategory, getCategory, listAll, snapshot } from './helpers.ts'

/** The category tree: depth and fullName follow renames and moves, no cycles, depth at most 4, parents the owner sees. */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

const patch = (key: string, id: string, body: unknown) => server.request('PATCH', `/v1/categories/${id}`, { key, body })

describe('hierarchy', () => {
  test('depth and fullName follow renames and moves, on every read', async () => {
    const owner = await server.owner()
    const a = await createCategory(server, owner.key, { name: 'A' })
    const b = await createCategory(server, owner.key, { name: 'B', parentId: a.id })
    const c = await createCategory(server, owner.key, { name: 'C', parentId: b.id })
    expect([a, b, c].map((x) => [x.depth, x.fullName])).toEqual([
      [0, 'A'],
      [1, 'A / B'],
      [2, 'A / B / C'],
    ])

    // rename the root: the descendants' fullName changes with it
    expect((await patch(owner.key, a.id, { name: 'Alpha' })).json.data.fullName).toBe('Alpha')
    expect((await getCategory(server, owner.key, b.id)).fullName).toBe('Alpha / B')
    expect((await getCategory(server, owner.key, c.id)).fullName).toBe('Alpha / B / C')
    const listed = (await listAll(server, owner.key)).filter((x) => !x.isSystem)
    expect(listed.map((x) => x.fullName)).toEqual(['Alpha', 'Alpha / B', 'Alpha / B / C'])

    // move B (and so C) to the top level
    const moved = await patch(owner.key, b.id, { parentId: null })
    expect(moved.json.data).toMatchObject({ parentId: null, depth: 0, fullName: 'B' })
    expect(await getCategory(server, owner.key, c.id)).toMatchObject({ parentId: b.id, depth: 1, fullName: 'B / C' })

    // move B below a system category
    const underSystem = await patch(owner.key, b.id, { parentId: 'cat_sys_groceries' })
    expect(underSystem.json.data).toMatchObject({ parentId: 'cat_sys_groceries', depth: 2, fullName: 'Food & Drinks / Groceries / B' })
    expect(await getCategory(server, owner.key, c.id)).toMatchObject({ depth: 3, fullName: 'Food & Drinks / Groceries / B / C' })

    // and back below A
    await patch(owner.key, b.id, { parentId: a.id })
    expect(await getCategory(server, owner.key, c.id)).toMatchObject({ depth: 2, fullName: 'Alpha / B / C' })
    // a custom category under a system one, under a custom one: the list filter by parent sees it
    expect((await listAll(server, owner.key, `parentId=${a.id}`)).map((x) => x.id)).toEqual([b.id])
  })

  test('a move that would make a cycle is 422 rule_violation and changes nothing', async () => {
    const owner = await server.owner()
    const a = await createCategory(server, owner.key, { name: 'A' })
    const b = await createCategory(server, owner.key, { name: 'B', parentId: a.id })
    const c = await createCategory(server, owner.key, { name: 'C', parentId: b.id })
    const before = snapshot(server, owner.id)
    expectProblem(await patch(owner.key, a.id, { parentId: a.id }), 422, 'rule_violation')
    expectProblem(await patch(owner.key, a.id, { parentId: b.id }), 422, 'rule_violation')
    expectProblem(await patch(owner.key, a.id, { parentId: c.id }), 422, 'rule_violation')
    expectProblem(await patch(owner.key, b.id, { parentId: c.id, name: 'renamed too' }), 422, 'rule_violation')
    expect(snapshot(server, owner.id)).toEqual(before)
    // keeping the same parent is no move at all
    expect((await patch(owner.key, c.id, { parentId: b.id })).status).toBe(200)
  })

  test('depth is at most 4, counting the whole subtree that moves', async () => {
    const owner = await server.owner()
    const chain = [await createCategory(server, owner.key, { name: 'L0' })]
    for (let i = 1; i <= 4; i++) chain.push(await createCategory(server, owner.key, { name: `L${i}`, parentId: chain[i - 1].id }))
    expect(chain.map((x) => x.depth)).toEqual([0, 1, 2, 3, 4])
    expect(chain[4].fullName).toBe('L0 / L1 / L2 / L3 / L4')

    const before = snapshot(server, owner.id)
    expectProblem(await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'L5', parentId: chain[4].id } }), 422, 'rule_violation')
    expectProblem(
      await server.request('POST', '/v1/categories/upsert', { key: owner.key, body: { externalId: 'deep', name: 'L5', parentId: chain[4].id } }),
      422,
      'rule_violation',
    )
    expect(snapshot(server, owner.id)).toEqual(before)

    // a two-level subtree fits below L2 (depths 3, 4) but not below L3 (4, 5)
    const x = await createCategory(server, owner.key, { name: 'X' })
    const y = await createCategory(server, owner.key, { name: 'Y', parentId: x.id })
    const beforeMove = snapshot(server, owner.id)
    expectProblem(await patch(owner.key, x.id, { parentId: chain[3].id }), 422, 'rule_violation')
    expectProblem(await patch(owner.key, x.id, { parentId: chain[4].id }), 422, 'rule_violation')
    expect(snapshot(server, owner.id)).toEqual(beforeMove)
    expect((await patch(owner.key, x.id, { parentId: chain[2].id })).json.data.depth).toBe(3)
    expect(await getCategory(server, owner.key, y.id)).toMatchObject({ depth: 4, fullName: 'L0 / L1 / L2 / X / Y' })

    // system categories count as levels: below cat_sys_groceries (depth 1) fit three more
    const s2 = await createCategory(server, owner.key, { name: 'S2', parentId: 'cat_sys_groceries' })
    const s3 = await createCategory(server, owner.key, { name: 'S3', parentId: s2.id })
    const s4 = await createCategory(server, owner.key, { name: 'S4', parentId: s3.id })
    expect(s4.depth).toBe(4)
    expectProblem(await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'S5', parentId: s4.id } }), 422, 'rule_violation')
  })

  test('parentId must be a category the owner sees', async () => {
    const owner = await server.owner({ country: 'DE' })
    const stranger = await server.owner({ country: 'DE' })
    const theirs = await createCategory(server, stranger.key, { name: 'Theirs' })
    const mine = await createCategory(server, owner.key, { name: 'Mine' })
    const before = snapshot(server, owner.id)
    for (const parentId of [theirs.id, 'cat_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b', 'cat_sys_contribution_401k', 'cat_sys_nope', 'garbage']) {
      expectProblem(await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'X', parentId } }), 422, 'invalid_reference')
      expectProblem(await patch(owner.key, mine.id, { parentId }), 422, 'invalid_reference')
    }
    expect(snapshot(server, owner.id)).toEqual(before)
    expect((await createCategory(server, owner.key, { name: 'Church', parentId: 'cat_sys_kirchensteuer' })).fullName).toBe(
      'Bills & Fees / Kirchensteuer / Church',
    )
  })
})
