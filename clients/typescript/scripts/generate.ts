/**
 * Regenerates src/schema.ts from the OpenAPI document of the pfin server in this repository.
 *
 *   bun run client:generate            (from the repository root)
 *   bun clients/typescript/scripts/generate.ts [--check]
 *
 * The document is built in-process: a platform over a throwaway DATA_DIR and the app that
 * `serve` runs, asked for GET /openapi.json through `app.handle` (no port is opened; the
 * document route does not touch owner data). `--check` writes nothing and exits 1 when the
 * checked-in file differs from what the document generates now.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../../src/config.ts'
import { closePlatform, createApp, createPlatform } from '../../../src/server.ts'
import { renderSchema } from './render.ts'

export const SCHEMA_FILE = join(import.meta.dir, '..', 'src', 'schema.ts')

/** pfin's /openapi.json as a server with default settings serves it. */
export async function buildDocument(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pfin-client-generate-'))
  // Defaults only (not process.env), so the document does not depend on who runs the script.
  const platform = createPlatform(loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' }), () => {})
  try {
    const response = await createApp(platform).handle(new Request('http://pfin.invalid/openapi.json'))
    if (response.status !== 200) throw new Error(`GET /openapi.json answered ${response.status}: ${await response.text()}`)
    return (await response.json()) as Record<string, unknown>
  } finally {
    closePlatform(platform)
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  const check = process.argv.includes('--check')
  const text = await renderSchema(await buildDocument())
  let current: string | null = null
  try {
    current = readFileSync(SCHEMA_FILE, 'utf8')
  } catch {}
  if (check) {
    if (current !== text) {
      console.error(`${SCHEMA_FILE} is out of date: run \`bun run client:generate\``)
      process.exit(1)
    }
    console.log(`${SCHEMA_FILE} is up to date`)
  } else if (current === text) {
    console.log(`${SCHEMA_FILE} unchanged`)
  } else {
    writeFileSync(SCHEMA_FILE, text)
    console.log(`wrote ${SCHEMA_FILE} (${text.length} characters)`)
  }
}
