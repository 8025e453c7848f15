import { isCompiledBinary } from '../../platform/program.ts'
import type { ReadFile, ReadFileOptions } from './read.ts'

/**
 * One worker thread (parse-worker.ts) that reads the statement files of every import, one after
 * another, off the event loop (CONTRACT §14): a hostile 4 MiB file keeps a core busy for at most
 * its reading, and no other request waits for it. Started on the first import.
 */

export interface ParseRequest {
  id: number
  bytes: Uint8Array
  options: ReadFileOptions
}

export type ParseReply = { id: number; read: ReadFile; error?: undefined } | { id: number; read?: undefined; error: { known: boolean; message: string } }

/** What a file's reading gave: the file, or why it cannot be read (`known`: the file's fault, told to the client). */
export type ParseOutcome = { read: ReadFile } | { error: { known: boolean; message: string } }

let worker: Worker | undefined
let next = 0
const pending = new Map<number, (outcome: ParseOutcome) => void>()

/**
 * The worker's module: beside this file in a checkout; in the compiled binary, where it is the
 * second entrypoint of `bun run build` (package.json), under the entrypoints' common folder
 * (src/), which is where the binary's own `import.meta.url` points.
 */
const workerUrl = () => new URL(isCompiledBinary() ? './modules/imports/parse-worker.ts' : './parse-worker.ts', import.meta.url).href

function start(): Worker {
  const made = new Worker(workerUrl())
  made.onmessage = (event: MessageEvent<ParseReply>) => {
    const settle = pending.get(event.data.id)
    pending.delete(event.data.id)
    settle?.(event.data.read ? { read: event.data.read } : { error: event.data.error as { known: boolean; message: string } })
  }
  made.onerror = (event) => {
    // The worker died: every file it held fails as the server's error, and the next import starts a new one.
    const message = event instanceof ErrorEvent ? event.message : 'the statement reader stopped'
    for (const settle of pending.values()) settle({ error: { known: false, message } })
    pending.clear()
    worker = undefined
  }
  // It must not keep a stopping server alive.
  made.unref()
  return made
}

/** Reads a file in the worker; the bytes are copied for it, so the caller's stay usable. */
export function readInWorker(bytes: Uint8Array, options: ReadFileOptions): Promise<ParseOutcome> {
  worker ??= start()
  const id = ++next
  const copy = bytes.slice()
  return new Promise((resolve) => {
    pending.set(id, resolve)
    ;(worker as Worker).postMessage({ id, bytes: copy, options } satisfies ParseRequest, [copy.buffer])
  })
}

/** Stops the worker (the server's shutdown). */
export function stopParserPool(): void {
  worker?.terminate()
  worker = undefined
}
