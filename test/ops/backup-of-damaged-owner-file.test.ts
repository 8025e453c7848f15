import { afterAll, expect, test } from 'bun:test'
import { rmSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { admin, adminJson, cleanup, processEnv, tempDir } from '../support/processes.ts'

/**
 * `backup` over an owner file that is emptied (0 bytes) or missing fails: exit 1, one line on
 * stderr, nothing on stdout, no backup folder. pfin treats both as a damaged owner file.
 *
 * Left to themselves, both would pass for sound: an emptied file is copied
 * by `VACUUM INTO` as a valid empty SQLite database, passes `integrity_check`, and goes into the
 * manifest; `backup verify` then calls the backup whole. A missing file is simply not listed (the
 * backup lists `tenants/*.db`, not the owners in control.db). Reporting success would tell the
 * operator the data is safe when one
 * owner's ledger is not in the backup (a restore of it puts back an empty file: 503 for that owner).
 *
 * CONTRACT §14: a file that is missing or holds no database (emptied to zero bytes) is a damaged
 * owner file. §2: any failure but bad arguments (a damaged file, a backup that does not verify)
 * prints one line on stderr and exits with 1; a command that fails prints nothing on stdout.
 * CONTRACT §18: "`backup --out DIR`:
 * a consistent copy of `control.db` and every owner's database, … each copy checked".
 * (A file that is not a database at all is refused the same way: exit 1, "file is not a database".)
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
