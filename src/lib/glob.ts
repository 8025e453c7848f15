/**
 * Glob patterns with two wildcards and nothing else: `*` (any run of characters, none
 * included) and `?` (exactly one character); every other character stands for itself.
 * Characters are Unicode code points.
 *
 * No regular expression is built from the pattern, and nothing backtracks, so a match costs time
 * linear in the text whatever the pattern holds: `*a*a*a*…b` against a long run of `a`s costs
 * what `abc` does.
 * - A pattern without `?` is its `*`-separated pieces found in order: the first at the start,
 *   each middle one at its leftmost place after the one before (leftmost is never worse), the
 *   last at the end. Each piece is looked for once, by the engine's own substring search.
 * - A pattern with `?` becomes the states of a nondeterministic automaton that the text runs
 *   through once, every state at a time, 32 states to a machine word (the shift-and method):
 *   O(text × ⌈pattern / 32⌉).
 */
export interface Glob {
  matches(text: string): boolean
}

const STAR = 0x2a
const QUESTION = 0x3f

export function compileGlob(pattern: string): Glob {
  return pattern.includes('?')
    ? automaton(pattern)
    : pieces(pattern.split('*').filter((piece, index, all) => piece !== '' || index === 0 || index === all.length - 1))
}

/** `*`-separated pieces (empty ones dropped but at the ends, where they say the pattern starts or ends with `*`). */
function pieces(parts: string[]): Glob {
  if (parts.length === 1) {
    const whole = parts[0] as string
    return { matches: (text) => text === whole }
  }
  const first = parts[0] as string
  const last = parts[parts.length - 1] as string
  const middle = parts.slice(1, -1)
  return {
    matches(text: string): boolean {
      if (text.length < first.length + last.length || !text.startsWith(first)) return false
      let from = first.length
      for (const piece of middle) {
        const at = text.indexOf(piece, from)
        if (at < 0) return false
        from = at + piece.length
      }
      return text.length - last.length >= from && text.endsWith(last)
    },
  }
}

/**
 * State j means "the first j non-star characters of the pattern are matched". A `?` or a
 * literal moves state j to j + 1 on a character it accepts; a `*` just before the j-th
 * character lets state j stay on any character. The text matches when the last state is live
 * after its last character.
 */
function automaton(pattern: string): Glob {
  const tokens: number[] = []
  const loops: number[] = []
  let star = false
  for (const char of pattern) {
    const code = char.codePointAt(0) as number
    if (code === STAR) {
      star = true
      continue
    }
    if (star) loops.push(tokens.length)
    star = false
    tokens.push(code)
  }
  if (star) loops.push(tokens.length)

  const states = tokens.length + 1
  const words = Math.ceil(states / 32)
  const mask = () => new Uint32Array(words)
  const setBit = (bits: Uint32Array, state: number) => {
    bits[state >>> 5] = ((bits[state >>> 5] as number) | (1 << (state & 31))) >>> 0
  }
  const any = mask()
  const loop = mask()
  const literal = new Map<number, Uint32Array>()
  for (const [index, code] of tokens.entries()) {
    if (code === QUESTION) {
      setBit(any, index + 1)
      continue
    }
    let bits = literal.get(code)
    if (!bits) {
      bits = mask()
      literal.set(code, bits)
    }
    setBit(bits, index + 1)
  }
  for (const state of loops) setBit(loop, state)
  const lastWord = (states - 1) >>> 5
  const lastBit = 1 << ((states - 1) & 31)

  if (words === 1) return new OneWord(literal, any[0] as number, loop[0] as number, lastBit)
  // What each character lets advance (`?` included), a row of `words` per character: a table for
  // the first 256 code points, a map past them. The state sets are reused: a match runs to its end
  // before another starts.
  const low = new Uint32Array(256 * words)
  for (let code = 0; code < 256; code++) low.set(any, code * words)
  const high = new Map<number, Uint32Array>()
  for (const [code, bits] of literal) {
    const row = bits.map((word, w) => (word | (any[w] as number)) >>> 0)
    if (code < 256) low.set(row, code * words)
    else high.set(code, row)
  }
  let live = mask()
  let next = mask()
  return {
    matches(text: string): boolean {
      live.fill(0)
      live[0] = 1
      for (let i = 0; i < text.length; i++) {
        let code = text.charCodeAt(i)
        let row: Uint32Array
        let at = 0
        if (code < 256) {
          row = low
          at = code * words
        } else {
          code = text.codePointAt(i) as number
          if (code > 0xffff) i++
          row = high.get(code) ?? any
        }
        let carry = 0
        let alive = 0
        for (let w = 0; w < words; w++) {
          const bits = live[w] as number
          const value = ((((bits << 1) | carry) & (row[at + w] as number)) | (bits & (loop[w] as number))) >>> 0
          carry = bits >>> 31
          next[w] = value
          alive |= value
        }
        if (alive === 0) return false
        const swap = live
        live = next
        next = swap
      }
      return ((live[lastWord] as number) & lastBit) !== 0
    },
  }
}

/**
 * The same automaton when every state fits one word (patterns of up to 31 characters besides
 * `*`): no arrays on the way. A class rather than a closure: every glob then has one shape, and
 * the engine keeps one fast path for all of an owner's globs.
 */
class OneWord implements Glob {
  /** What each character lets advance, `?` included: a table for the first 256 code points, a map past them. */
  private readonly low = new Int32Array(256)
  private readonly high = new Map<number, number>()
  constructor(
    literal: Map<number, Uint32Array>,
    private readonly any: number,
    private readonly loop: number,
    private readonly last: number,
  ) {
    this.low.fill(any)
    for (const [code, bits] of literal) {
      if (code < 256) this.low[code] = any | (bits[0] as number)
      else this.high.set(code, any | (bits[0] as number))
    }
  }

  matches(text: string): boolean {
    const { low, high, any, loop } = this
    let live = 1
    for (let i = 0; i < text.length; i++) {
      let code = text.charCodeAt(i)
      let accepts: number
      if (code < 256) accepts = low[code] as number
      else {
        code = text.codePointAt(i) as number
        if (code > 0xffff) i++
        accepts = high.get(code) ?? any
      }
      live = ((live << 1) & accepts) | (live & loop)
      if (live === 0) return false
    }
    return (live & this.last) !== 0
  }
}
