import type { HeaderSink } from './rate-limit.ts'

/** Adds `value` to the response's `Vary` list, once (CORS adds `Origin`, compression `Accept-Encoding`). */
export function addVary(headers: HeaderSink, value: string): void {
  const current = headers.vary
  if (current === undefined || current === '') headers.vary = value
  else if (!String(current).split(', ').includes(value)) headers.vary = `${current}, ${value}`
}
