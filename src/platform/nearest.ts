/**
 * "Did you mean …?": the known name nearest to a misspelt one. One rule for the CLI's commands
 * and flags and for the API's fields, query parameters and tool arguments, so a person and an
 * agent are helped alike.
 */

/** Longer than any known name by far: nothing is near it, and the distance is never computed. */
const MAX_WORD = 64

/** `account_id`, `AccountID` and `accountId` are one name to a reader; `--expires_in` is `--expires-in`. */
const folded = (name: string) => name.toLowerCase().replace(/[-_]/g, '')

/**
 * How far a guess may be: one edit for a word of up to four characters (two would turn `id`
 * into `q`), two for longer ones (`ammount`, `acountId`).
 */
const reach = (word: string) => (word.length <= 4 ? 1 : 2)

/** The known word nearest to `word` within its reach (a prefix counts as one edit: `owne`, `rotat`), if any. */
export function closest(word: string, known: readonly string[]): string | undefined {
  if (word.length > MAX_WORD) return undefined
  const given = folded(word)
  const limit = reach(given)
  let best: { name: string; distance: number } | undefined
  for (const name of known) {
    const candidate = folded(name)
    const distance = candidate.startsWith(given) && given.length >= 2 && candidate !== given ? 1 : editDistance(given, candidate, limit)
    if (distance <= limit && (!best || distance < best.distance)) best = { name, distance }
  }
  return best?.name
}

/**
 * Edits from `a` to `b`, a swap of two neighbours counting as one (`emial`, `prot`): the optimal
 * string alignment distance. Anything beyond `limit` is reported as `limit + 1`, without the
 * table when the lengths alone say so.
 */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1
  let twoBack: number[] = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    let least = i
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1)
      let cost = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) cost = Math.min(cost, (twoBack[j - 2] as number) + 1)
      current[j] = cost
      least = Math.min(least, cost)
    }
    // No row after this one can do better than its predecessors' best (less one swap).
    if (least > limit + 1) return limit + 1
    twoBack = previous
    previous = current
  }
  return Math.min(previous[b.length] as number, limit + 1)
}
