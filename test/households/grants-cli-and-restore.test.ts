import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import { admin, adminJson, cleanup, processEnv, tempDir } from '../support/processes.ts'

/**
 * The grant admin commands (CONTRACT §2, §30), and grants through a whole restore and an owner's
 * deletion (CONTRACT §18): a grant revoked since the backup stays revoked, one given since is
 * kept, and deleting either owner ends it.
 */

setDefaultTimeout(60_000)
afterAll(cleanup)

// biome-ignore lint/suspicious/noExplicitAny: tests read the JSON freely
const json = (env: Record<string, string>, ...args: string[]): Promise<any> => adminJson(env, ...args)

async function setup() {
  const dataDir = tempDir('pfin-grants-')
  const env = processEnv(dataDir)
  const owner = async (name: string) => (await json(env, 'owner', 'create', '--name', name)).id as string
  return { dataDir, env, ana: await owner('Ana'), bea: await owner('Bea'), cai: await owner('Cai') }
}

describe('grant create, list, revoke', () => {
  test('made with --json, listed from both sides, refused twice, revoked; bad arguments exit 2', async () => {
    const { env, ana, bea } = await setup()
    const made = await json(
      env,
      'grant',
      'create',
      '--owner',
      ana,
      '--to',
      bea,
      '--scopes',
      'me:read,accounts:read',
      '--label',
      'partner',
      '--expires-in',
      '90d',
    )
    expect(made.grant).toMatchObject({ subjectOwnerId: ana, granteeOwnerId: bea, scopes: ['me:read', 'accounts:read'], label: 'partner', revokedAt: null })
    expect(made.grant.id).toMatch(/^grt_[0-9a-f]{32}$/)
    expect(made.grant.expiresAt - made.grant.createdAt).toBe(90 * 86_400_000)
    expect((await json(env, 'grant', 'list', '--owner', ana)).grants).toEqual([made.grant])
    expect((await json(env, 'grant', 'list', '--to', bea)).grants).toEqual([made.grant])
    expect((await json(env, 'grant', 'list', '--to', ana)).grants).toEqual([])

    for (const args of [
      ['create', '--owner', ana, '--to', bea, '--scopes', 'me:read'], // a live grant exists
      ['create', '--owner', ana, '--to', ana, '--scopes', 'me:read'], // oneself
      ['create', '--owner', ana, '--to', 'own_nobody', '--scopes', 'me:read'],
      ['create', '--owner', ana, '--to', bea, '--scopes', 'keys:write'],
      ['create', '--owner', ana, '--to', bea, '--scopes', 'grants:read'],
      ['create', '--owner', ana, '--to', bea, '--scopes', 'me:read,,accounts:read'],
      ['create', '--owner', ana, '--to', bea],
      ['create', '--owner', ana, '--to', bea, '--scopes', 'me:read', '--expires-in', '5 days'],
      ['list', '--owner', ana, '--to', bea],
      ['revoke', 'grt_00000000000000000000000000000000'],
      ['revoke', '../x'],
    ]) {
      const result = await admin(env, 'grant', ...args, '--json')
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 2, stdout: '' })
    }

    expect(await json(env, 'grant', 'revoke', made.grant.id)).toEqual({ id: made.grant.id, revoked: true })
    const listed = (await json(env, 'grant', 'list', '--owner', ana)).grants
    expect(listed[0].revokedAt).toBeNumber()
    // Once revoked, a new grant may be given.
    expect((await admin(env, 'grant', 'create', '--owner', ana, '--to', bea, '--scopes', 'me:read')).code).toBe(0)
  })
})

describe('restore and owner delete', () => {
  test('a whole restore keeps grants as they were before it; owner delete of either side ends a grant', async () => {
    const { env, ana, bea, cai } = await setup()
    const revokedSince = (await json(env, 'grant', 'create', '--owner', ana, '--to', bea, '--scopes', 'me:read')).grant.id
    const kept = (await json(env, 'grant', 'create', '--owner', bea, '--to', ana, '--scopes', 'accounts:read')).grant.id
    const out = join(tempDir('pfin-backup-'), 'b')
    expect((await admin(env, 'backup', '--out', out)).code).toBe(0)
    await json(env, 'grant', 'revoke', revokedSince)
    const givenSince = (await json(env, 'grant', 'create', '--owner', cai, '--to', ana, '--scopes', 'me:read')).grant.id

    expect((await admin(env, 'restore', '--from', out, '--yes')).code).toBe(0)
    const after = (await json(env, 'grant', 'list')).grants as { id: string; revokedAt: number | null }[]
    const state = Object.fromEntries(after.map((g) => [g.id, g.revokedAt === null ? 'live' : 'revoked']))
    expect(state).toEqual({ [revokedSince]: 'revoked', [kept]: 'live', [givenSince]: 'live' })

    // Deleting the grantee ends the grant it received; deleting the subject ends the one it gave.
    expect((await admin(env, 'owner', 'delete', '--owner', cai, '--yes')).code).toBe(0)
    expect((await json(env, 'grant', 'list')).grants.map((g: { id: string }) => g.id)).not.toContain(givenSince)
    expect((await admin(env, 'owner', 'delete', '--owner', bea, '--yes')).code).toBe(0)
    expect((await json(env, 'grant', 'list')).grants).toEqual([])
  })
})
