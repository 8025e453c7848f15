import { afterAll, expect, test } from 'bun:test'
import { rmSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { admin, adminJson, cleanup, processEnv, tempDir } from '../support/processes.ts'

/**
 * Campaign 7 finding (2026-11-26): `backup` reports success over an owner file that is emptied
 * (0 bytes) or missing, though pfin treats both as a damaged owner file. An emptied file is copied
 * by `VACUUM INTO` as a valid empty SQLite database, passes `integrity_check`, and goes into the
 * manifest; `backup verify` then calls the backup whole. A missing file is simply not listed (the
 * backup lists `tenants/*.db`, not the owners in control.db): `{"owners": 0}`, exit 0, while
 * control.db still holds the owner. Either way the operator is told the data is safe when one
 * owner's ledger is not in the backup (a restore of it puts back an empty file: 503 for that owner).
 *
 * README "Operation": "A damaged owner file. … So is a file that is missing or holds no database
 * (emptied to zero bytes): every owner's file is made with the owner". README "Admin commands":
 * "any other failure (a damaged file, a backup that does not verify) prints one line on stderr and
 * exits with 1. A command that fails prints nothing on stdout". CONTRACT §18: "`backup --out DIR`:
 * a consistent copy of `control.db` and every owner's database, … each copy checked".
 * (A file that is not a database at all is already refused: exit 1, "file is not a database".)
 *
 * Before a fix: emptied → exit 0, `{"out":…,"owners":1,"bytes":…}`, and `backup verify` → ok;
 * missing → exit 0, `{"out":…,"owners":0,…}`.
 */

afterAll(cleanup)

for (const [name, damage] of [
  ['emptied to 0 bytes', (file: string) => truncateSync(file, 0)],
  ['missing', (file: string) => rmSync(file)],
] as const) {
  test(`backup over an owner file ${name}: exit 1, one line on stderr, nothing on stdout, no backup folder`, async () => {
    const dataDir = tempDir('pfin-campaign7-bdamaged-')
    const env = processEnv(dataDir, { LOG_FORMAT: 'off' })
    const damaged = (await adminJson(env, 'owner', 'create', '--name', 'Damaged')).id as string
    await adminJson(env, 'owner', 'create', '--name', 'Fine')
    damage(join(dataDir, 'tenants', `${damaged}.db`))

    const out = join(tempDir('pfin-campaign7-bdamaged-out-'), 'b')
    const result = await admin(env, 'backup', '--out', out)
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' })
    expect(result.stderr.split('\n').filter((line) => line.trim() !== '')).toHaveLength(1)
    expect(await Bun.file(join(out, 'manifest.json')).exists()).toBe(false)
  }, 30_000)
}
