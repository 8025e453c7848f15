import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import { ControlStore } from '../../src/db/control/store.ts'
import { tokenHash } from '../../src/platform/auth.ts'
import { hashPassword, verifyPassword } from '../../src/platform/passwords.ts'
import { admin, adminJson, cleanup, processEnv, tempDir } from '../support/processes.ts'

/**
 * A whole restore keeps sign-in as it was before it (CONTRACT §18, §28): passwords, invitations
 * and signed-in apps are credentials, like keys. The failure this catches: the backup's
 * control.db brings back an old password (one the owner changed because it leaked) and a grant
 * the owner had signed out, with its refresh token working again.
 */

// Sign-ins run argon2 (and some tests many): seconds on a busy machine.
setDefaultTimeout(60_000)

afterAll(cleanup)

function withControl<T>(dataDir: string, run: (control: ControlStore) => T): T {
  const control = new ControlStore(dataDir)
  try {
    return run(control)
  } finally {
    control.close()
  }
}

function grant(control: ControlStore, ownerId: string, clientId: string, id: string, refresh: string) {
  const now = Date.now()
  control.db.transaction(() => {
    control.sqlite.run('INSERT INTO oauth_grants (id, owner_id, client_id, scopes, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)', [
      id,
      ownerId,
      clientId,
      '["me:read"]',
      now,
      now + 86_400_000,
    ])
    control.sqlite.run("INSERT INTO oauth_tokens (token_hash, grant_id, kind, created_at, expires_at) VALUES (?, ?, 'refresh', ?, ?)", [
      tokenHash(refresh),
      id,
      now,
      now + 86_400_000,
    ])
  })
}

test('a password changed and an app signed out since the backup stay so after a whole restore', async () => {
  const dataDir = tempDir('pfin-restore-')
  const env = processEnv(dataDir)
  const owner = (await adminJson(env, 'owner', 'create', '--name', 'Ana')).id as string
  const oldHash = await hashPassword('the old leaked password')
  const newHash = await hashPassword('the new private password')
  const signedOut = 'app_0193a5c0e1f27c3d9a0b1c2d3e4f5a60'
  withControl(dataDir, (control) => {
    control.oauth.saveLogin(owner, { login: 'ana', passwordHash: oldHash }, Date.now())
    control.oauth.createClient({ id: 'cli_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b', name: 'Phone', redirectUris: ['com.example.app:/cb'], createdAt: Date.now() })
    grant(control, owner, 'cli_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b', signedOut, 'pfr_old')
  })
  const out = join(tempDir('pfin-backup-'), 'b')
  expect((await admin(env, 'backup', '--out', out)).code).toBe(0)
  withControl(dataDir, (control) => {
    control.oauth.saveLogin(owner, { passwordHash: newHash }, Date.now())
    control.oauth.revokeGrant(signedOut, Date.now())
    grant(control, owner, 'cli_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b', 'app_0193a5c0e1f27c3d9a0b1c2d3e4f5a61', 'pfr_new')
  })

  expect((await admin(env, 'restore', '--from', out, '--yes')).code).toBe(0)

  const after = withControl(dataDir, (control) => ({
    hash: control.oauth.findLogin(owner)?.passwordHash as string,
    signedOut: control.oauth.findGrant(signedOut)?.revokedAt,
    oldRefresh: control.oauth.findToken(tokenHash('pfr_old')),
    newRefresh: control.oauth.findToken(tokenHash('pfr_new'))?.grant.id,
  }))
  expect(await verifyPassword(after.hash, 'the new private password')).toBe(true)
  expect(after.signedOut).toBeNumber()
  expect(after.oldRefresh).toBeUndefined()
  expect(after.newRefresh).toBe('app_0193a5c0e1f27c3d9a0b1c2d3e4f5a61')
})
