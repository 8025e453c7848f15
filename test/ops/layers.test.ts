import { expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'

/** ops sits below cli and server: none of its imports may reach back up to them. */

const SRC = join(import.meta.dir, '..', '..', 'src')

test('src/ops imports nothing from src/cli or src/server.ts', () => {
  const upward: string[] = []
  for (const name of readdirSync(join(SRC, 'ops')).filter((file) => file.endsWith('.ts'))) {
    const text = readFileSync(join(SRC, 'ops', name), 'utf8')
    for (const [, spec] of text.matchAll(/^\s*(?:import|export)\b[^'"]*from\s+['"]([^'"]+)['"]/gm)) {
      if (!spec?.startsWith('.')) continue
      const target = relative(SRC, resolve(SRC, 'ops', spec))
      if (target.startsWith('cli/') || target === 'server.ts') upward.push(`ops/${name} → ${target}`)
    }
  }
  expect(upward).toEqual([])
})
