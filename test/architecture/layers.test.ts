import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/** The layers of docs/architecture.md hold: no import runs from a lower layer to a higher one, and feature modules import each other one way only. */

const ROOT = resolve(import.meta.dir, '..', '..')

/**
 * Top to bottom; a file may import from its own layer and the layers below it. ops sits under
 * server: the CLI drives it (backup, restore, the backup schedule that `serve` starts), it
 * works on whole data directories through db and platform, and it must never reach back up
 * into the CLI or the HTTP server. config.ts is read from platform up.
 */
const LAYERS: { name: string; holds: (path: string) => boolean }[] = [
  { name: 'cli', holds: (path) => path === 'src/main.ts' || path.startsWith('src/cli/') },
  { name: 'server', holds: (path) => path === 'src/server.ts' },
  { name: 'ops', holds: (path) => path.startsWith('src/ops/') },
  { name: 'modules', holds: (path) => path.startsWith('src/modules/') },
  { name: 'platform', holds: (path) => path.startsWith('src/platform/') || path === 'src/config.ts' },
  { name: 'db', holds: (path) => path.startsWith('src/db/') },
  { name: 'lib', holds: (path) => path.startsWith('src/lib/') || path === 'src/types.d.ts' },
]

/**
 * Imports that break the rules today, each being removed by a change in progress elsewhere.
 * The lead empties this list after merging; an entry whose import is gone fails the test, so
 * none outlives its reason.
 */
const PENDING: { from: string; to: string; why: string }[] = []

/**
 * Files kept only as re-exports of what moved, for importers being edited elsewhere (each
 * needs a one-line import change). Nothing else may import them; once no listed importer
 * does, the entry and the re-export go. `names`: only those names are re-exports.
 */
const REEXPORTS_FOR_PENDING: { file: string; names?: string[]; movedTo: string; importers: string[] }[] = []

interface Import {
  /** The importing file, from the repository root. */
  file: string
  line: number
  /** The imported file, from the repository root. */
  target: string
  /** The names imported ('*' for a namespace or a side effect, 'default' for a default import). */
  names: string[]
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) return sourceFiles(path)
    return path.endsWith('.ts') ? [path] : []
  })
}

// Declarations start a line (the formatter sees to it); a clause never holds a brace inside its braces.
const DECLARATION = /^(?:import|export)\s+(?:type\s+)?((?:[\w$]+\s*,\s*)?(?:\*(?:\s+as\s+[\w$]+)?|\{[^}]*\})|[\w$]+)\s*from\s*['"]([^'"]+)['"]/gm
const SIDE_EFFECT = /^import\s*['"]([^'"]+)['"]/gm
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g

function namesOf(clause: string): string[] {
  const braces = /\{([^}]*)\}/.exec(clause)
  const names = braces
    ? (braces[1] as string)
        .split(',')
        .map(
          (part) =>
            part
              .trim()
              .replace(/^type\s+/, '')
              .split(/\s+as\s+/)[0] as string,
        )
        .filter(Boolean)
    : []
  const before = braces ? clause.slice(0, braces.index) : clause
  if (before.includes('*')) names.push('*')
  else if (/[\w$]/.test(before)) names.push('default')
  return names
}

/** Every import of a file inside the repository (packages and built-ins are not layers). */
function importsOf(file: string): Import[] {
  const text = readFileSync(join(ROOT, file), 'utf8')
  const lineAt = (index: number) => text.slice(0, index).split('\n').length
  const found: Import[] = []
  const add = (index: number, specifier: string, names: string[]) => {
    if (!specifier.startsWith('.')) return
    found.push({ file, line: lineAt(index), target: relative(ROOT, resolve(ROOT, dirname(file), specifier)), names })
  }
  for (const match of text.matchAll(DECLARATION)) add(match.index, match[2] as string, namesOf(match[1] as string))
  for (const match of text.matchAll(SIDE_EFFECT)) add(match.index, match[1] as string, ['*'])
  for (const match of text.matchAll(DYNAMIC)) add(match.index, match[1] as string, ['*'])
  return found
}

const FILES = sourceFiles('src')
const IMPORTS = FILES.flatMap(importsOf)
const inSrc = (target: string) => target.startsWith('src/')
const where = (item: Import) => `${item.file}:${item.line}`
const isPending = (item: Import) => PENDING.some((entry) => entry.from === item.file && entry.to === item.target)

function layerOf(path: string): number {
  return LAYERS.findIndex((layer) => layer.holds(path))
}

/** The feature module a file belongs to (`src/modules/<name>/…`); modules/index.ts, which lists their routes, is none. */
function moduleOf(path: string): string | undefined {
  return /^src\/modules\/([^/]+)\//.exec(path)?.[1]
}

describe('imports follow the layers', () => {
  test('the scan sees every import: each one names a file that exists', () => {
    expect(IMPORTS.length).toBeGreaterThan(200)
    expect(IMPORTS.filter((item) => !existsSync(join(ROOT, item.target))).map((item) => `${where(item)} → ${item.target}`)).toEqual([])
  })

  test('every source file has a layer', () => {
    expect(FILES.filter((file) => layerOf(file) === -1)).toEqual([])
  })

  test('no import runs from a lower layer to a higher one', () => {
    const upward = IMPORTS.filter((item) => inSrc(item.target) && !isPending(item) && layerOf(item.target) < layerOf(item.file)).map(
      (item) =>
        `${where(item)} imports ${item.target}: ${LAYERS[layerOf(item.file)]?.name} must not import from ${LAYERS[layerOf(item.target)]?.name}, a layer above it`,
    )
    expect(upward).toEqual([])
  })

  test('feature modules import each other one way: no cycle', () => {
    // module → imported module → the first import that makes the edge
    const edges = new Map<string, Map<string, Import>>()
    for (const item of IMPORTS) {
      const from = moduleOf(item.file)
      const to = moduleOf(item.target)
      if (from === undefined || to === undefined || from === to || isPending(item)) continue
      const out = edges.get(from) ?? new Map<string, Import>()
      if (!out.has(to)) out.set(to, item)
      edges.set(from, out)
    }
    const cycles: string[] = []
    for (const [start, out] of edges) {
      for (const [next, first] of out) {
        const back = pathBetween(edges, next, start)
        // Reported once, from the smallest name in the cycle.
        if (back && [start, ...back].every((name) => start <= name)) {
          const steps = [first, ...back.slice(0, -1).map((name, i) => edges.get(name)?.get(back[i + 1] as string) as Import)]
          cycles.push(`${[start, ...back].join(' → ')}: ${steps.map((step) => `${where(step)} imports ${step.target}`).join('; ')}`)
        }
      }
    }
    expect(cycles).toEqual([])
  })

  test('every pending exception is still needed: remove an entry once its import is gone', () => {
    const gone = PENDING.filter((entry) => !IMPORTS.some((item) => item.file === entry.from && item.target === entry.to))
    expect(gone.map((entry) => `${entry.from} → ${entry.to} (${entry.why})`)).toEqual([])
  })

  test('a re-export kept for files edited elsewhere is imported by those files only, and goes when none does', () => {
    const problems: string[] = []
    for (const { file, names, movedTo, importers } of REEXPORTS_FOR_PENDING) {
      const users = IMPORTS.filter((item) => item.target === file && (names === undefined || item.names.some((name) => names.includes(name))))
      for (const item of users) {
        if (!importers.includes(item.file)) problems.push(`${where(item)} imports ${file}: import ${movedTo} instead`)
      }
      for (const importer of importers) {
        if (!users.some((item) => item.file === importer))
          problems.push(`${importer} no longer imports ${file}: take it off the list (and the re-export, when none is left)`)
      }
    }
    expect(problems).toEqual([])
  })
})

/** A path of modules from `from` to `to` (both included) along the edges, if there is one. */
function pathBetween(edges: Map<string, Map<string, Import>>, from: string, to: string): string[] | undefined {
  const previous = new Map<string, string | null>([[from, null]])
  const queue = [from]
  while (queue.length > 0) {
    const name = queue.shift() as string
    if (name === to) {
      const path = [name]
      for (let step = previous.get(name); step != null; step = previous.get(step)) path.unshift(step)
      return path
    }
    for (const next of edges.get(name)?.keys() ?? []) {
      if (!previous.has(next)) {
        previous.set(next, name)
        queue.push(next)
      }
    }
  }
  return undefined
}
