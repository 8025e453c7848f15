/**
 * Glob patterns with two wildcards and nothing else: `*` (any run of characters, none
 * included) and `?` (exactly one character); every other character stands for itself.
 *
 * No regular expression is built from the pattern, and nothing backtracks: the pattern becomes
 * the states of a nondeterministic automaton, and the text runs through it once, every state
 * at a time, 32 states to a machine word (the shift-and method). A match costs
 * O(text × ⌈pattern / 32⌉) whatever the pattern holds, so `*a*a*a*…b` against a long run of
 * `a`s costs what `abc` does. Characters are Unicode code points.
 */
export interface Glob {
  matches(text: string): boolean
}

const STAR = 0x2a
const QUESTION = 0x3f

/**
 * State j means "the first j non-star characters of the pattern are matched". A `?` or a
 * literal moves state j to j + 1 on a character it accepts; a `*` just before the j-th
 * character lets state j stay on any character. The text matches when the last state is live
 * after its last character.
 */
export function compileGlob(pattern: string): Glob {
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
  const none = mask()

  if (words === 1) return oneWord(literal, any[0] as number, loop[0] as number, lastBit)
  return {
    matches(text: string): boolean {
      let live = mask()
      let next = mask()
      live[0] = 1
      for (let i = 0; i < text.length; i++) {
        const code = text.codePointAt(i) as number
        if (code > 0xffff) i++
        const accepts = literal.get(code) ?? none
        let carry = 0
        let alive = 0
        for (let w = 0; w < words; w++) {
          const bits = live[w] as number
          const shifted = ((bits << 1) | carry) >>> 0
          carry = bits >>> 31
          const value = ((shifted & ((any[w] as number) | (accepts[w] as number))) | (bits & (loop[w] as number))) >>> 0
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

/** The same automaton when every state fits one word (patterns of up to 31 characters besides `*`): no arrays on the way. */
function oneWord(literal: Map<number, Uint32Array>, any: number, loop: number, last: number): Glob {
  const accepts = new Map<number, number>()
  for (const [code, bits] of literal) accepts.set(code, bits[0] as number)
  return {
    matches(text: string): boolean {
      let live = 1
      for (let i = 0; i < text.length; i++) {
        const code = text.codePointAt(i) as number
        if (code > 0xffff) i++
        live = ((live << 1) & (any | (accepts.get(code) ?? 0))) | (live & loop)
        if (live === 0) return false
      }
      return (live & last) !== 0
    },
  }
}
