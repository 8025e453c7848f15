/**
 * Elements of the two markups statement files use: XML (CAMT.053, OFX 2.x) and OFX 1.x's SGML,
 * whose leaf elements have no end tag (`<TRNAMT>-30.00` then the next tag). One scanner reads
 * both in a single pass, jumping from `<` to `>` with indexOf; a tree builder per markup turns
 * its tags into nodes. No DTD is read and no entity but the five predefined and character
 * references is expanded, so no file can make the reader do more than read it (CONTRACT §14).
 */

export interface MarkupNode {
  /** The element's name without a namespace prefix (`Ntry` for `<ns2:Ntry>`). */
  name: string
  attributes: Record<string, string> | null
  /** Its text, trimmed, entities decoded ('' when none). */
  text: string
  children: MarkupNode[]
  /** Where its start tag is in the text: `lineOf` turns it into a line number. */
  at: number
}

export class MarkupError extends Error {}

export interface MarkupLimits {
  /** Deeper than this is no statement (OFX and CAMT nest about ten levels). */
  maxDepth: number
  /** More elements than this is no statement this server takes: a hostile file is refused early. */
  maxElements: number
  /** More tags than this, end tags included (an SGML file may hold end tags of nothing), is refused as well. */
  maxTags: number
  /** The element each row of the statement is (`Ntry`, `STMTTRN`), and how many rows are taken. */
  rows: { name: string; max: number }
}

/** The file holds more rows than an import takes; thrown as soon as one more is seen. */
export class TooManyRows extends Error {}

const CHARACTER_REFERENCE = /&#(?:x([0-9a-fA-F]{1,6})|(\d{1,7}));/g

/** The five predefined entities (and `&nbsp;`, which banks write) by plain replacement; character references by code. */
function decodeEntities(text: string): string {
  if (!text.includes('&')) return text
  let out = text
  if (out.includes('&#')) {
    out = out.replace(CHARACTER_REFERENCE, (whole, hex?: string, dec?: string) => {
      const code = hex ? Number.parseInt(hex, 16) : Number(dec)
      // &#38; stays as its reference until the end, so that `&#38;lt;` does not become `<`.
      if (code === 0x26) return '\u0000amp;'
      return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : whole
    })
  }
  out = out.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&quot;', '"').replaceAll('&apos;', "'").replaceAll('&nbsp;', '\u00a0')
  return out.replaceAll('&amp;', '&').replaceAll('\u0000amp;', '&')
}

/** `name="value"` pairs, read left to right once (a regular expression here could backtrack over a long name). */
function attributesOf(source: string): Record<string, string> | null {
  if (!source.includes('=')) return null
  const attributes: Record<string, string> = Object.create(null)
  const n = source.length
  let i = 0
  for (;;) {
    while (i < n && isSpace(source.charCodeAt(i))) i++
    if (i >= n) return attributes
    const eq = source.indexOf('=', i)
    if (eq < 0) throw new MarkupError('an attribute has no value')
    const name = source.slice(i, eq).trim()
    let q = eq + 1
    while (q < n && isSpace(source.charCodeAt(q))) q++
    const quote = source[q]
    if (name === '' || /\s/.test(name) || (quote !== '"' && quote !== "'"))
      throw new MarkupError(`attribute ${JSON.stringify(name.slice(0, 40))} is not name="value"`)
    const close = source.indexOf(quote, q + 1)
    if (close < 0) throw new MarkupError('an attribute value is never closed')
    attributes[localName(name)] = decodeEntities(source.slice(q + 1, close))
    i = close + 1
  }
}

const localName = (name: string) => {
  const colon = name.indexOf(':')
  return colon >= 0 ? name.slice(colon + 1) : name
}

/** What the scanner reports; `text` is raw (entities not yet decoded). */
interface Sink {
  open(name: string, attributes: string, selfClosing: boolean, at: number): void
  close(name: string, at: number): void
  text(text: string): void
}

/**
 * The line of a position in `source`. The line starts are found once, on the first question,
 * so a file of many elements costs one pass however many lines are asked for.
 */
export function lineCounter(source: string): (position: number) => number {
  let starts: number[] | undefined
  return (position) => {
    if (!starts) {
      starts = [0]
      for (let i = source.indexOf('\n'); i >= 0; i = source.indexOf('\n', i + 1)) starts.push(i + 1)
    }
    let lo = 0
    let hi = starts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if ((starts[mid] as number) <= position) lo = mid
      else hi = mid - 1
    }
    return lo + 1
  }
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

function scan(source: string, from: number, sink: Sink): void {
  const n = source.length
  let i = from
  while (i < n) {
    const lt = source.indexOf('<', i)
    const end = lt < 0 ? n : lt
    if (end > i) sink.text(source.slice(i, end))
    if (lt < 0) return
    const next = source.charCodeAt(lt + 1)
    if (next !== 0x21 && next !== 0x3f) {
      // An element's tag: the usual case, told by its second character.
      const gt = source.indexOf('>', lt + 1)
      if (gt < 0) throw new MarkupError('a tag is never closed')
      if (next === 0x2f) {
        const name = source.slice(lt + 2, gt)
        sink.close(localName(isSpace(name.charCodeAt(name.length - 1)) ? name.trim() : name), lt)
      } else {
        let tag = source.slice(lt + 1, gt)
        const selfClosing = tag.endsWith('/')
        if (selfClosing) tag = tag.slice(0, -1)
        let space = 0
        while (space < tag.length && !isSpace(tag.charCodeAt(space))) space++
        const name = tag.slice(0, space)
        if (name === '' || name.includes('<')) throw new MarkupError(`"<${tag.slice(0, 20)}" is not a tag`)
        sink.open(localName(name), space < tag.length ? tag.slice(space) : '', selfClosing, lt)
      }
      i = gt + 1
    } else if (source.startsWith('<!--', lt)) {
      const close = source.indexOf('-->', lt + 4)
      if (close < 0) throw new MarkupError('a comment is never closed')
      i = close + 3
    } else if (source.startsWith('<![CDATA[', lt)) {
      const close = source.indexOf(']]>', lt + 9)
      if (close < 0) throw new MarkupError('a CDATA section is never closed')
      // Marked so that it is not entity-decoded: CDATA is literal.
      sink.text(`\u0000${source.slice(lt + 9, close)}`)
      i = close + 3
    } else if (source.startsWith('<?', lt)) {
      const close = source.indexOf('?>', lt + 2)
      if (close < 0) throw new MarkupError('a processing instruction is never closed')
      i = close + 2
    } else {
      // A DTD could declare entities that expand without bound: no statement has one.
      throw new MarkupError('the file has a document type declaration (<!DOCTYPE …>), which statement files do not; it is not read')
    }
  }
}

const textOf = (raw: string) => (raw.charCodeAt(0) === 0 ? raw.slice(1) : decodeEntities(raw))

/**
 * Builds the element tree. `sgml`: OFX 1.x, where an element that is not one of `aggregates`
 * ends at the next tag and an end tag closes every element opened after its own; otherwise
 * XML, where each end tag must close the element open.
 */
export function readMarkup(source: string, from: number, limits: MarkupLimits, sgml?: { aggregates: ReadonlySet<string> }): MarkupNode {
  const lineOf = lineCounter(source)
  const root: MarkupNode = { name: '', attributes: null, text: '', children: [], at: 0 }
  const stack: MarkupNode[] = [root]
  let elements = 0
  let tags = 0
  let rows = 0
  const top = () => stack[stack.length - 1] as MarkupNode
  scan(source, from, {
    open(name, attributes, selfClosing, at) {
      // SGML: the element open ends here if it holds text, or is empty and not an aggregate (`<MEMO><NAME>…`).
      const open = top()
      if (sgml && stack.length > 1 && open.children.length === 0 && (open.text !== '' || !sgml.aggregates.has(open.name))) stack.pop()
      if (++tags > limits.maxTags) throw new MarkupError(`the file has more than ${limits.maxTags} tags`)
      if (++elements > limits.maxElements) throw new MarkupError(`the file has more than ${limits.maxElements} elements`)
      if (name === limits.rows.name && ++rows > limits.rows.max) throw new TooManyRows()
      const node: MarkupNode = { name, attributes: sgml ? null : attributesOf(attributes), text: '', children: [], at }
      top().children.push(node)
      if (selfClosing) return
      stack.push(node)
      if (stack.length > limits.maxDepth) throw new MarkupError(`line ${lineOf(at)}: elements nest more than ${limits.maxDepth} deep`)
    },
    close(name, at) {
      if (++tags > limits.maxTags) throw new MarkupError(`the file has more than ${limits.maxTags} tags`)
      if (sgml) {
        let open = stack.length - 1
        while (open > 0 && (stack[open] as MarkupNode).name !== name) open--
        // An end tag for nothing open (some banks write </STMTTRN> twice) is stepped over.
        if (open > 0) stack.length = open
        return
      }
      if (stack.length === 1 || top().name !== name) {
        throw new MarkupError(`line ${lineOf(at)}: </${name.slice(0, 40)}> does not close ${stack.length === 1 ? 'any element' : `<${top().name}>`}`)
      }
      stack.pop()
    },
    text(raw) {
      const node = top()
      const text = textOf(raw).trim()
      if (text === '' || node === root) return
      node.text = node.text === '' ? text : `${node.text} ${text}`
    },
  })
  if (!sgml && stack.length > 1) throw new MarkupError(`<${top().name}> (line ${lineOf(top().at)}) is never closed`)
  return root
}

/** The first child named `name`, through a path of names. */
export function child(node: MarkupNode | undefined, ...path: string[]): MarkupNode | undefined {
  let at = node
  for (const name of path) at = at?.children.find((c) => c.name === name)
  return at
}

export const childrenNamed = (node: MarkupNode | undefined, name: string): MarkupNode[] => node?.children.filter((c) => c.name === name) ?? []

/** The text at a path, or null when absent or empty. */
export function textAt(node: MarkupNode | undefined, ...path: string[]): string | null {
  const found = child(node, ...path)
  return found && found.text !== '' ? found.text : null
}
