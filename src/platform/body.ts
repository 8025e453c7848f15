import { ApiError } from './errors.ts'
import { canonicalJson, decodeJson } from './json.ts'

export const MAX_BODY_BYTES = 1024 * 1024

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Reads a JSON request body without trusting it: 415 for another media type, 413 past
 * 1 MiB (checked before and while reading), 400 for text that is not JSON.
 * Returns undefined when no body was sent.
 */
export async function readJsonBody(request: Request, limit = MAX_BODY_BYTES): Promise<{ value: unknown; canonical: string } | undefined> {
  const declared = Number(request.headers.get('content-length') ?? 'NaN')
  if (request.body === null || declared === 0) return undefined
  const contentType = request.headers.get('content-type')
  if (!contentType || !JSON_MEDIA_TYPE.test(contentType)) {
    throw new ApiError('unsupported_media_type', 'Send the request body as JSON with Content-Type: application/json')
  }
  if (declared > limit) throw tooLarge(limit)
  const bytes = await readLimited(request.body, limit)
  if (bytes.byteLength === 0) return undefined
  let value: unknown
  try {
    value = decodeJson(utf8.decode(bytes))
  } catch {
    throw new ApiError('malformed_json', 'The request body is not valid JSON')
  }
  return { value, canonical: canonicalJson(value) }
}

const tooLarge = (limit: number) => new ApiError('payload_too_large', `The request body must not exceed ${limit} bytes`)

async function readLimited(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of stream) {
    size += chunk.byteLength
    if (size > limit) throw tooLarge(limit)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}
