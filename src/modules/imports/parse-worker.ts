import { EncodingError } from './encoding.ts'
import { FormatError, TooManyRowsError } from './formats/types.ts'
import { readStatementFile } from './read.ts'
import type { ParseReply, ParseRequest } from './parser-pool.ts'

/**
 * The worker thread that reads statement files (CONTRACT §14, §24): decoding and reading a 4 MiB
 * file costs tens to hundreds of milliseconds, which on the server's one thread would hold every
 * other owner's requests. Here it holds none. It only reads: the rows come back to the request,
 * which checks them against the account and applies them.
 */

declare const self: Worker

self.onmessage = (event: MessageEvent<ParseRequest>) => {
  const { id, bytes, options } = event.data
  let reply: ParseReply
  try {
    reply = { id, read: readStatementFile(bytes, options) }
  } catch (error) {
    const known = error instanceof FormatError || error instanceof EncodingError || error instanceof TooManyRowsError
    reply = { id, error: { known, message: error instanceof Error ? error.message : String(error) } }
  }
  self.postMessage(reply)
}
