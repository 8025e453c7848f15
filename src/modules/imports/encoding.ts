/**
 * A statement file's bytes as text (CONTRACT §24): a byte-order mark decides, else the
 * encoding the caller names, else what the file declares (OFX 1.x `CHARSET:1252`, XML
 * `encoding="…"`), else strict UTF-8 with windows-1252 as the fallback, which the rows it
 * touched are warned about. Every step is one pass over the bytes.
 */

export interface DecodedFile {
  text: string
  /** The WHATWG name of the encoding read (`utf-8`, `windows-1252`, `utf-16le`, …). */
  encoding: string
  /** The file was not UTF-8 and nothing said what it is: windows-1252 was guessed. */
  guessed: boolean
}

export class EncodingError extends Error {}

/** Bun types TextDecoder's label as a closed list; any WHATWG label is given here and checked by TextDecoder itself. */
type Label = ConstructorParameters<typeof TextDecoder>[0]

const BOMS: [number[], string][] = [
  [[0xef, 0xbb, 0xbf], 'utf-8'],
  [[0xff, 0xfe], 'utf-16le'],
  [[0xfe, 0xff], 'utf-16be'],
]

/** The WHATWG name of an encoding label (`latin1` → `windows-1252`), or null when TextDecoder does not know it. */
export function encodingName(label: string): string | null {
  try {
    return new TextDecoder(label.trim() as Label).encoding
  } catch {
    return null
  }
}

/** What the first bytes of the file declare, read as ASCII (both declarations are ASCII by their formats' rules). */
function declaredEncoding(bytes: Uint8Array): string | null {
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 1024))
  const xml = /^\s*<\?xml[^>]{0,200}?encoding\s*=\s*["']([A-Za-z0-9._:-]{1,40})["']/.exec(head)
  if (xml) return encodingName(xml[1] as string)
  // OFX 1.x: ENCODING:UTF-8 wins; otherwise CHARSET names a code page (1252, ISO-8859-1) or NONE.
  if (!/^\s*OFXHEADER\s*:/i.test(head)) return null
  const encoding = /^\s*ENCODING\s*:\s*([A-Za-z0-9-]+)\s*$/im.exec(head)?.[1]?.toUpperCase()
  if (encoding === 'UTF-8' || encoding === 'UTF8') return 'utf-8'
  const charset = /^\s*CHARSET\s*:\s*([A-Za-z0-9-]+)\s*$/im.exec(head)?.[1]
  if (!charset || /^(NONE|USASCII)$/i.test(charset)) return null
  return encodingName(/^\d+$/.test(charset) ? `windows-${charset}` : charset)
}

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return prefix.every((byte, i) => bytes[i] === byte)
}

/** `label`: the caller's `encoding` option, already checked with `encodingName`. */
export function decodeFile(bytes: Uint8Array, label?: string): DecodedFile {
  for (const [mark, encoding] of BOMS) {
    if (startsWith(bytes, mark)) return decodeAs(bytes.subarray(mark.length), label ?? encoding, false)
  }
  if (label) return decodeAs(bytes, label, false)
  const declared = declaredEncoding(bytes)
  if (declared) return decodeAs(bytes, declared, false)
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'utf-8', guessed: false }
  } catch {
    return decodeAs(bytes, 'windows-1252', true)
  }
}

function decodeAs(bytes: Uint8Array, encoding: string, guessed: boolean): DecodedFile {
  const decoder = new TextDecoder(encoding as Label, { fatal: encoding === 'utf-8' })
  try {
    return { text: decoder.decode(bytes), encoding: decoder.encoding, guessed }
  } catch {
    throw new EncodingError(`the file is not valid ${decoder.encoding} text; send encoding=windows-1252 (or the file's encoding) if it is another`)
  }
}

/** Whether a row's text holds characters a guessed encoding may have read wrongly: anything beyond ASCII. */
export const beyondAscii = (text: string | null): boolean => text !== null && /[^\p{ASCII}]/u.test(text)
