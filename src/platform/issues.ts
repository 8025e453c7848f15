import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors'

/**
 * Every problem of a refused body, query or set of tool arguments, told in one 422 `detail`
 * (the problem body's six fields are fixed, CONTRACT §6), so that a client fixes them in one
 * round trip instead of one per mistake. CONTRACT §6 states the choices.
 */

/**
 * Unknown names come first: a misspelt field explains the "is required" that follows it, and
 * the one fix (rename it) answers both.
 */
export const ISSUE_KINDS = ['unknown', 'missing', 'invalid'] as const
export type IssueKind = (typeof ISSUE_KINDS)[number]

/** Enough to fix a body in one go; a body of a thousand mistakes is told as a count. */
export const MAX_LISTED = 10
/** The listed issues' share of the detail: far more than ten ordinary issues take, and a hard bound all the same. */
export const MAX_LISTED_CHARS = 1500
/**
 * Issues are counted up to this many, then the search stops ("and over 990 more problems"):
 * finding each of a hostile body's 100,000 unknown fields would cost more than everything else
 * its request costs, to tell a client nothing more.
 */
export const MAX_COUNTED = 1000
/** A name the client sent is shown up to this length: enough to recognise it, never the whole of a hostile one. */
export const MAX_NAME_CHARS = 64

export function issueKind(error: ValueError): IssueKind {
  if (error.type === ValueErrorType.ObjectAdditionalProperties) return 'unknown'
  if (error.type === ValueErrorType.ObjectRequiredProperty) return 'missing'
  return 'invalid'
}

/** A name from the client as it may appear in a detail: clipped, and well-formed (no lone surrogate). */
export function shownName(name: string): string {
  return (name.length > MAX_NAME_CHARS ? `${name.slice(0, MAX_NAME_CHARS)}…` : name).toWellFormed()
}

/**
 * The issues of one request, in sections (the body; each item of a batch): a section's issues
 * are shown after those of the sections before it, unknown, then missing, then invalid. Texts
 * are made only for the issues that can still be shown; the rest are counted, so a body of any
 * size costs one pass and a bounded detail.
 */
export class Issues {
  private readonly shown: string[] = []
  private section: Record<IssueKind, (() => string)[]> = { unknown: [], missing: [], invalid: [] }
  private total = 0
  private beyond = false

  get count(): number {
    return this.total
  }

  /** Counted as far as they are; one more issue only marks that there are more. */
  get full(): boolean {
    return this.total >= MAX_COUNTED
  }

  /** There are more issues than counted. */
  overflow(): void {
    this.beyond = true
  }

  add(kind: IssueKind, text: () => string): void {
    this.total++
    if (this.keeps(kind)) this.section[kind].push(text)
  }

  /** Whether an issue of this kind would still be shown; one that would not is only counted (`tally`). */
  keeps(kind: IssueKind): boolean {
    return this.shown.length + this.section[kind].length < MAX_LISTED
  }

  tally(): void {
    this.total++
  }

  /** Ends the current section. */
  close(): void {
    for (const kind of ISSUE_KINDS) {
      for (const text of this.section[kind]) if (this.shown.length < MAX_LISTED) this.shown.push(text())
    }
    this.section = { unknown: [], missing: [], invalid: [] }
  }

  /** `a; b; c`, or `a; b; and 7 more problems`: at most MAX_LISTED issues in at most MAX_LISTED_CHARS, the first always. */
  detail(): string {
    this.close()
    let listed = 0
    let length = 0
    for (const text of this.shown) {
      const added = listed === 0 ? text.length : length + 2 + text.length
      if (listed > 0 && added > MAX_LISTED_CHARS) break
      length = added
      listed++
    }
    const head = this.shown.slice(0, listed).join('; ')
    const rest = this.total - listed
    if (this.beyond) return `${head}; and over ${rest} more problems`
    return rest > 0 ? `${head}; and ${rest} more problem${rest === 1 ? '' : 's'}` : head
  }
}

/**
 * Adds the errors TypeBox finds to `issues`, one per path: TypeBox reports a string once per
 * rule it breaks (one after the other), and a missing field also as a wrong type of the absent
 * value (later). Only those paths are remembered: a body of 100,000 unknown fields holds 100,000
 * distinct paths, and a set of them would cost more than finding them.
 */
export function addSchemaIssues(issues: Issues, errors: Iterable<ValueError>, text: (error: ValueError) => string): void {
  const missing = new Set<string>()
  let previous: string | undefined
  for (const error of errors) {
    const { path } = error
    if (path === previous) continue
    previous = path
    const kind = issueKind(error)
    if (kind === 'missing') missing.add(path)
    else if (kind === 'invalid' && missing.has(path)) continue
    if (issues.full) {
      issues.overflow()
      return
    }
    if (issues.keeps(kind)) issues.add(kind, () => text(error))
    else issues.tally()
  }
}
