import { canonicalJson } from './canonical-json.ts'
import { MAX_SIGNIFICANT_DIGITS } from './decimal.ts'
import { ApiError } from './errors.ts'
import { decodeJson, findIllFormedText, JsonLimitError, MAX_DEPTH } from './json.ts'
import { fieldPath } from './validation.ts'

export const MAX_BODY_BYTES = 1024 * 1024

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i

/** A request body read as a file's bytes (a route with `fileBody`), whatever its media type. */
export class RawFile {
  constructor(
    readonly bytes: Uint8Array,
    readonly mediaType: string | null,
  ) {}
}

export interface DecodedBody {
  value: unknown
  /** What the fingerprint hashes (CONTRACT §8). */
  canonical: string
  bytes: number
}

/** Whether a request's Content-Type names JSON. */
export const isJsonBody = (request: Request): boolean => JSON_MEDIA_TYPE.test(request.headers.get('content-type') ?? '')

/**
 * Reads a file sent as the body (`curl --data-binary @statement.ofx`): the bytes as they are, of
 * any media type (curl's default form type too), never decoded or parsed here. 413 past `limit`,
 * 415 for a content coding. Its canonical form for the fingerprint is its length and SHA-256.
 * Undefined when no body was sent.
 */
export async function readFileBody(request: Request, limit: number): Promise<DecodedBody | undefined> {
  const declared = Number(request.headers.get('content-length') ?? 'NaN')
  if (request.body === null || declared === 0) return undefined
  refuseContentCoding(request)
  if (declared > limit) throw tooLarge(limit)
  const bytes = await readLimited(request.body, limit)
  if (bytes.byteLength === 0) return undefined
  const sha256 = new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
  return {
    value: new RawFile(bytes, request.headers.get('content-type')),
    canonical: canonicalJson({ file: { bytes: bytes.byteLength, sha256 } }),
    bytes: bytes.byteLength,
  }
}

function refuseContentCoding(request: Request): void {
  const coding = request.headers.get('content-encoding')?.trim().toLowerCase()
  if (coding && coding !== 'identity') {
    // RFC 9110 §8.4.1: a content coding the server does not decode is refused, never read as text.
    throw new ApiError('unsupported_media_type', 'Send the request body uncompressed: Content-Encoding is not supported (send none, or identity)')
  }
}
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Reads a JSON request body without trusting it: 415 for another media type, 413 past
 * 1 MiB (checked before and while reading), 400 for text that is not JSON or nests past
 * MAX_DEPTH, 422 for text the server will not store or compute with (a lone surrogate, a
 * number of more than MAX_SIGNIFICANT_DIGITS digits), whichever route reads the body.
 * Every step costs linear time in the body's size (CONTRACT §14).
 * Returns undefined when no body was sent.
 */
export async function readJsonBody(request: Request, limit = MAX_BODY_BYTES): Promise<DecodedBody | undefined> {
  const declared = Number(request.headers.get('content-length') ?? 'NaN')
  if (request.body === null || declared === 0) return undefined
  const contentType = request.headers.get('content-type')
  if (!contentType || !JSON_MEDIA_TYPE.test(contentType)) {
    throw new ApiError('unsupported_media_type', 'Send the request body as JSON with Content-Type: application/json')
  }
  refuseContentCoding(request)
  if (declared > limit) throw tooLarge(limit)
  const bytes = await readLimited(request.body, limit)
  if (bytes.byteLength === 0) return undefined
  const text = decodeText(bytes)
  const value = decode(text)
  assertSoundText(text, value)
  return { value, canonical: canonicalJson(value), bytes: bytes.byteLength }
}

function decodeText(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes)
  } catch {
    throw malformed('The request body is not valid JSON (it is not UTF-8 text)')
  }
}

function decode(text: string): unknown {
  try {
    return decodeJson(text)
  } catch (error) {
    if (!(error instanceof JsonLimitError)) throw malformed('The request body is not valid JSON')
    if (error.limit === 'depth') throw malformed(`The request body nests more than ${MAX_DEPTH} levels deep`)
    throw new ApiError('validation_failed', `${subject(error.path)} must have at most ${MAX_SIGNIFICANT_DIGITS} significant digits`)
  }
}

/** `\ud800`-style escapes are the only way JSON text can spell a surrogate: without one, there is nothing to walk. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/

/**
 * Refuses a string or field name holding a lone surrogate: it is no Unicode text, SQLite
 * would store U+FFFD in its place, and the answer would not match what is kept.
 */
function assertSoundText(text: string, value: unknown): void {
  if (!SURROGATE_ESCAPE.test(text)) return
  const found = findIllFormedText(value)
  if (!found) return
  const what = found.key ? `field name '${fieldPath(found.path).toWellFormed()}'` : subject(found.path)
  throw new ApiError('validation_failed', `${what} must be valid Unicode text (it holds a lone surrogate)`)
}

/** `field 'customFields[0].label'`, or the body itself. */
const subject = (path: (string | number)[]) => (path.length ? `field '${fieldPath(path).toWellFormed()}'` : 'the request body')

const malformed = (detail: string) => new ApiError('malformed_json', detail)

export const tooLarge = (limit: number) => new ApiError('payload_too_large', `The request body must not exceed ${limit} bytes`)

/**
 * Reading fails only when the client stops sending: it closed the connection part way through
 * its Content-Length or chunks, or went quiet past the server's idle timeout. That is the
 * client's doing, answered (to nobody) and logged as a body that is not JSON, not as a 500.
 */
const cutShort = () => malformed('The request body ended early: the client closed the connection before sending all of it')

export async function readLimited(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for await (const chunk of stream) {
      size += chunk.byteLength
      if (size > limit) throw tooLarge(limit)
      chunks.push(chunk)
    }
  } catch (error) {
    throw error instanceof ApiError ? error : cutShort()
  }
  return Buffer.concat(chunks)
}
