import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

/**
 * Every section of the contract that the code, the tests and the docs cite (`CONTRACT §14`,
 * `§6`, `§15–§16`, `§3.2`) has its heading in docs/contract.md, so a reader can follow each one.
 */

const root = join(import.meta.dir, '..', '..')
const contractPath = join(root, 'docs', 'contract.md')

/** Section numbers that have a heading: `## 14. Operation`, `### 3.2 Text`. */
export function headings(markdown: string): string[] {
  return [...markdown.matchAll(/^#{2,6}\s+§?(\d+(?:\.\d+)*)\.?\s/gm)].map((match) => match[1] as string)
}

export interface Citation {
  line: number
  section: string
}

// A `§` cites the document named just before it: `SPEC §2.3`, `RFC 9110 §8.4.1` and `issue 7 §8`
// are other documents' sections; `CONTRACT §6`, or a `§` with no name before it, is the
// contract's. A name carries over a list (`CONTRACT §4, §10`, `issue 3 §5, §9`, `§15–§16`),
// also across a comment's line break, but not past any other word.
const TOKEN = /(?<name>\bCONTRACT\b|\bSPEC\b|\bRFC\s*\d+|\b[Ii]ssue\s+\d+)|§\s?(?<section>\d+(?:\.\d+)*)/g
const LIST_SEPARATOR = /^(?:[\s,;/*+&–—-]|\band\b|\bor\b)*$/

/** The contract sections a text cites, with their 1-based lines. */
export function contractCitations(text: string): Citation[] {
  const found: Citation[] = []
  let current: string | null = null
  let end = 0
  for (const match of text.matchAll(TOKEN)) {
    const gap = text.slice(end, match.index)
    const { name, section } = match.groups as { name?: string; section?: string }
    if (name) current = name
    else if (section) {
      if (current === null || !LIST_SEPARATOR.test(gap)) current = 'CONTRACT'
      if (current === 'CONTRACT') found.push({ line: text.slice(0, match.index).split('\n').length, section })
    }
    end = match.index + match[0].length
  }
  return found
}

/** `file:line §N` for each citation whose section has no heading. */
export function unresolved(files: Record<string, string>, known: Set<string>): string[] {
  return Object.entries(files).flatMap(([file, text]) =>
    contractCitations(text)
      .filter((citation) => !known.has(citation.section))
      .map((citation) => `${file}:${citation.line} §${citation.section}`),
  )
}

function sourcesCiting(): Record<string, string> {
  const files: Record<string, string> = {}
  const globs: [string, string][] = [
    ['src', '**/*.ts'],
    ['test', '**/*.ts'],
    ['docs', '*.md'],
    ['.', 'README.md'],
  ]
  for (const [dir, pattern] of globs) {
    for (const path of new Bun.Glob(pattern).scanSync({ cwd: join(root, dir), absolute: true })) {
      // This file's own examples cite made-up sections on purpose.
      if (path !== import.meta.path) files[relative(root, path)] = readFileSync(path, 'utf8')
    }
  }
  return files
}

describe('docs/contract.md', () => {
  const contract = readFileSync(contractPath, 'utf8')
  const sections = headings(contract)

  test('holds §1–§18 in order, each once (later sections follow §18)', () => {
    const top = sections.filter((section) => !section.includes('.')).map(Number)
    expect(top.slice(0, 18)).toEqual(Array.from({ length: 18 }, (_, index) => index + 1))
    expect(top).toEqual([...top].sort((a, b) => a - b))
    expect(new Set(sections).size).toBe(sections.length)
  })

  test('every § cited in src/, test/, docs/ and the README has a heading there', () => {
    const files = sourcesCiting()
    expect(Object.keys(files).filter((file) => file.startsWith('src/')).length).toBeGreaterThan(50)
    expect(Object.keys(files).some((file) => file.startsWith('test/'))).toBe(true)
    const cited = Object.values(files).flatMap(contractCitations)
    // The code cites the contract often; an empty count means the scan itself broke.
    expect(cited.length).toBeGreaterThan(100)
    expect(unresolved(files, new Set(sections))).toEqual([])
  })
})

describe('reading citations', () => {
  test('names the contract’s sections, not another document’s', () => {
    const text = [
      '/** SPEC §2.6 / CONTRACT §3: every field. */',
      '// RFC 9110 §8.4.1: a content coding the server does not decode',
      ' * Edges found by fuzzing (issue 7 §7), and the contract: §18 restore,',
      ' * (issue 3 §5, §9) CONTRACT §15–§16, §4 and §14; see CONTRACT',
      ' * §11 for storage',
    ].join('\n')
    expect(contractCitations(text)).toEqual([
      { line: 1, section: '3' },
      { line: 3, section: '18' },
      { line: 4, section: '15' },
      { line: 4, section: '16' },
      { line: 4, section: '4' },
      { line: 4, section: '14' },
      { line: 5, section: '11' },
    ])
  })

  test('a section with no heading is reported with its file and line', () => {
    const known = new Set(headings('## 1. Running it\n\n### 3.2 Text\n\n## 14. Operation\n'))
    expect([...known]).toEqual(['1', '3.2', '14'])
    expect(unresolved({ 'src/a.ts': '// CONTRACT §14\n\n// CONTRACT §99, §3.2 and §3.3' }, known)).toEqual(['src/a.ts:3 §99', 'src/a.ts:3 §3.3'])
  })
})
