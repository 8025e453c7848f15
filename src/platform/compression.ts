import type { HeaderSink } from './rate-limit.ts'
import { addVary } from './vary.ts'

/**
 * Response compression (CONTRACT §25): a body over 1 KiB goes out coded with zstd, brotli or gzip
 * when the client's `Accept-Encoding` admits one (its highest q wins; on a tie zstd, then brotli,
 * then gzip: the fastest for a comparable size), with `Vary: Accept-Encoding`; smaller bodies, and
 * bodies of clients that accept none, go out as they are. The levels are chosen for CPU per
 * request, not the last byte (test/bench/compress.bench.ts measures them on a page of 200
 * transactions).
 */

export type Coding = 'zstd' | 'br' | 'gzip'

/** Bodies up to this many characters are sent as they are: coding them saves less than it costs. */
export const MIN_COMPRESSED_LENGTH = 1024

/** Preference on equal q: fastest first at a comparable size (see the compress benchmark). */
const PREFERENCE: readonly Coding[] = ['zstd', 'br', 'gzip']

/**
 * Measured on a page of 200 transactions (98 KB of JSON), in one process: zstd 1 makes 8.0 KB in
 * ~70 µs (level 3: 7.7 KB, ~115 µs); brotli 1 8.5 KB in ~150 µs (quality 4: 7.5 KB, ~610 µs);
 * gzip 2 9.3 KB in ~160 µs (level 6: 8.0 KB, ~550 µs). The last tenth of the bytes would cost
 * three to four times the CPU on every request.
 */
const ZSTD_LEVEL = 1
const BROTLI_QUALITY = 1
const GZIP_LEVEL = 2

/** Accept-Encoding values seen, with their choice: clients send a handful of distinct values. */
const chosen = new Map<string, Coding | null>()
const MAX_REMEMBERED = 256

/** The coding for a client that sent `header` (RFC 9110 §12.5.3), or null for none. */
export function chooseCoding(header: string | null): Coding | null {
  if (header === null || header === '') return null
  let choice = chosen.get(header)
  if (choice === undefined) {
    choice = parseChoice(header)
    if (chosen.size >= MAX_REMEMBERED) chosen.clear()
    chosen.set(header, choice)
  }
  return choice
}

function parseChoice(header: string): Coding | null {
  const q = new Map<string, number>()
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase())
    if (!name) continue
    const weight = params.find((p) => p.startsWith('q='))
    const value = weight === undefined ? 1 : Number(weight.slice(2))
    q.set(name, Number.isFinite(value) ? value : 0)
  }
  const any = q.get('*')
  let best: Coding | null = null
  let bestQ = 0
  for (const coding of PREFERENCE) {
    const value = q.get(coding) ?? any ?? 0
    if (value > bestQ) {
      best = coding
      bestQ = value
    }
  }
  return best
}

/** node:zlib (for brotli) loads with the first brotli answer: it costs ~30 ms of a start, and Bun codes zstd and gzip itself. */
let zlib: typeof import('node:zlib') | undefined
const brotli = (bytes: Uint8Array): Uint8Array => {
  zlib ??= require('node:zlib') as typeof import('node:zlib')
  return zlib.brotliCompressSync(bytes, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength },
  })
}

const encoder = new TextEncoder()

/** `text` coded with `coding`. */
export function encode(text: string | Uint8Array, coding: Coding): Uint8Array {
  const bytes = (typeof text === 'string' ? encoder.encode(text) : text) as Uint8Array<ArrayBuffer>
  if (coding === 'zstd') return Bun.zstdCompressSync(bytes, { level: ZSTD_LEVEL })
  if (coding === 'br') return brotli(bytes)
  return Bun.gzipSync(bytes, { level: GZIP_LEVEL })
}

/**
 * The body as it goes out to a client that sent `acceptEncoding`: coded, with `Content-Encoding`
 * and `Vary` set, when it is over the threshold and the client takes a coding; as it is otherwise.
 * The `ETag` (etag.ts) stays the one of the JSON text: it names the resource, whatever carries it.
 */
export function encodeBody(body: string, acceptEncoding: string | null, headers: HeaderSink): string | Uint8Array {
  if (body.length <= MIN_COMPRESSED_LENGTH) return body
  addVary(headers, 'Accept-Encoding')
  const coding = chooseCoding(acceptEncoding)
  if (coding === null) return body
  headers['content-encoding'] = coding
  return encode(body, coding)
}
