import { afterAll, expect, test } from 'bun:test'
import { rmSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { admin, adminJson, cleanup, processEnv, tempDir } from '../support/processes.ts'

/**
 * `backup` over an owner file that is emptied (0 bytes) or missing fails: exit 1, one line on
 * stderr, nothing on stdout, no backup folder.
 *
 * pfin treats both as a damaged owner file (503 for that owner, CONTRACT §14). `VACUUM INTO`
 * copies an emptied file as a valid empty database that passes `integrity_check`, and a missing
 * one is simply not in the listing of `tenants/*.db`: reporting success would tell the operator
 * the data is safe while one owner's ledger is not in the backup (and its restore would put back
 * an empty file). CONTRACT §18: an owner file that is missing or holds no database fails the
 * backup; §2: a failure is one line on stderr, exit 1, and nothing on stdout. (A file that is not
 * a database at all is refused the same way.)
 */

afterAll(cleanup)

for (const [name, damage] of [
  ['emptied to 0 bytes', (file: string) => truncateSync(file, 0)],
  ['missing', (file: string) => rmSync(file)],
] as const) {
  test(`backup over an owner file ${name}: exit 1, one line on stderr, nothing on stdout, no backup folder`, async () => {
    const dataDir = tempDir('pfin-bdamaged-')
    const env = processEnv(dataDir, { LOG_FORMAT: 'off' })
    const damaged = (await adminJson(env, 'owner', 'create', '--name', 'Damaged')).id as string
    await adminJson(env, 'owner', 'create', '--name', 'Fine')
    damage(join(dataDir, 'tenants', `${damaged}.db`))

    const out = join(tempDir('pfin-bdamaged-out-'), 'b')
    const result = await admin(env, 'backup', '--out', out)
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' })
    expect(result.stderr.split('\n').filter((line) => line.trim() !== '')).toHaveLength(1)
    expect(await Bun.file(join(out, 'manifest.json')).exists()).toBe(false)
  }, 30_000)
}
