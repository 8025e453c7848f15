import { invalidReference, ruleViolation } from '../../platform/errors.ts'
import type { TagRow } from '../tags/queries.ts'
import type { References } from './references.ts'

/**
 * A body's `tagIds` or `tagNames` as the transaction's tag ids (CONTRACT §22), in the order
 * given with repeats dropped; null when the body sends neither (the tags stay). An archived tag
 * stays on the transactions that have it, but is given to no other.
 */
export function resolveTags(refs: References, body: { tagIds?: string[]; tagNames?: string[] }, current: readonly string[]): string[] | null {
  if (body.tagIds !== undefined && body.tagNames !== undefined) throw ruleViolation('Send tagIds or tagNames, not both')
  const chosen: string[] = []
  const take = (tag: TagRow, field: string) => {
    if (tag.isArchived && !current.includes(tag.id)) {
      throw ruleViolation(
        `${field}: tag ${JSON.stringify(tag.name)} (${tag.id}) is archived; restore it (PATCH /v1/tags/${tag.id} with isArchived: false) to give it to more transactions`,
      )
    }
    if (!chosen.includes(tag.id)) chosen.push(tag.id)
  }
  if (body.tagIds !== undefined) {
    for (const [index, id] of body.tagIds.entries()) {
      const tag = refs.tag(id)
      if (!tag) throw invalidReference(`tagIds[${index}]`, id)
      take(tag, `tagIds[${index}]`)
    }
    return chosen
  }
  if (body.tagNames !== undefined) {
    for (const [index, name] of body.tagNames.entries()) take(refs.tagNamed(name.trim(), `tagNames[${index}]`), `tagNames[${index}]`)
    return chosen
  }
  return null
}

export const sameTags = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((id, i) => id === b[i])
