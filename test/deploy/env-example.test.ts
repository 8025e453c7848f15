import { expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../src/config.ts'

/**
 * .env.example lists every environment variable pfin's code reads, each commented out with its
 * default and a comment above it; the defaults it shows are the ones loadConfig applies.
 */

const root = join(import.meta.dir, '..', '..')
const example = readFileSync(join(root, '.env.example'), 'utf8').split('\n')

/** `#NAME=value` lines: the documented variables and their defaults. */
const documented = new Map<string, string>()
for (const [index, line] of example.entries()) {
  const match = /^#([A-Z][A-Z0-9_]*)=(.*)$/.exec(line)
  if (!match) continue
  documented.set(match[1] as string, match[2] as string)
  const above = example[index - 1] ?? ''
  test(`${match[1]} has a comment above it`, () => expect(above).toMatch(/^# \S/))
}

/** Every variable read in src/: env.NAME, env['NAME'], intFrom(env, 'NAME', …). */
function variablesRead(): Set<string> {
  const names = new Set<string>()
  const files = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'))
  for (const file of files) {
    const text = readFileSync(join(root, 'src', file), 'utf8')
    for (const match of text.matchAll(/\benv\.([A-Z][A-Z0-9_]+)|\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]|intFrom\(env, '([A-Z][A-Z0-9_]+)'/g)) {
      names.add((match[1] ?? match[2] ?? match[3]) as string)
    }
  }
  return names
}

test('every variable the code reads is listed, and nothing else', () => {
  const read = variablesRead()
  expect(read.size).toBeGreaterThanOrEqual(17)
  expect([...documented.keys()].sort()).toEqual([...read].sort())
})

test('nothing is set by the file as it is: every setting is commented out', () => {
  expect(example.filter((line) => /^\s*[A-Z][A-Z0-9_]*=/.test(line))).toEqual([])
})

test('the defaults shown are the defaults pfin applies', () => {
  const uncommented = Object.fromEntries(documented)
  expect(loadConfig(uncommented)).toEqual(loadConfig({}))
  expect(documented.get('PFIN_URL')).toBe('http://127.0.0.1:3000')
})
