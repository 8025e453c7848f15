import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'

/** The README stays a front door (≤ 300 lines), and it and docs/ link only to what exists and speak no tracker jargon. */

const root = join(import.meta.dir, '..', '..')
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]
const text = (file: string) => readFileSync(join(root, file), 'utf8')

/** The lines of a Markdown text outside its fenced code blocks. */
function prose(markdown: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = []
  let fence: string | null = null
  markdown.split('\n').forEach((line, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence === null && marker) fence = marker
    else if (fence !== null && marker && line.trim() === fence) fence = null
    else if (fence === null) out.push({ line: index + 1, text: line })
  })
  return out
}

/** The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const { text: line } of prose(markdown)) {
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line)
    if (!heading) continue
    const slug = (heading[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    out.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return out
}

describe('the README', () => {
  test('is at most 300 lines', () => {
    expect(text('README.md').split('\n').length).toBeLessThanOrEqual(300)
  })

  test('links the contract and every document in docs/', () => {
    const readme = text('README.md')
    for (const file of documents.filter((file) => file !== 'README.md')) expect(readme).toContain(`](${file})`)
  })
})

describe('README.md and docs/', () => {
  test('every relative link points at a file that exists, and at a heading it has', () => {
    const broken: string[] = []
    for (const file of documents) {
      for (const { line, text: content } of prose(text(file))) {
        for (const [, target] of content.matchAll(/\]\(([^)\s]+)\)/g)) {
          if (/^[a-z]+:/i.test(target as string)) continue
          const [path = '', anchor] = (target as string).split('#')
          const resolved = path === '' ? file : relative(root, normalize(join(root, dirname(file), path)))
          if (!existsSync(join(root, resolved))) {
            broken.push(`${file}:${line} ${target}: no file ${resolved}`)
            continue
          }
          if (anchor && resolved.endsWith('.md') && !anchors(text(resolved)).has(anchor)) broken.push(`${file}:${line} ${target}: no heading #${anchor}`)
        }
      }
    }
    expect(broken).toEqual([])
  })

  test('no issue numbers, campaigns or sessions: a reader has none of them', () => {
    const jargon = /\b[Ii]ssue\s+#?\d+|\bcampaign|\bsession of\b|\b(?:late|evening|night|that|next|this) session\b/gi
    const found = documents.flatMap((file) =>
      text(file)
        .split('\n')
        .flatMap((line, index) => [...line.matchAll(jargon)].map((match) => `${file}:${index + 1}: ${match[0]}`)),
    )
    expect(found).toEqual([])
  })
})
