import { expect, test } from 'bun:test'
import { ApiError } from '../../src/platform/errors.ts'
import { readAndResolve } from './helpers.ts'
import { HOSTILE, HOSTILE_BYTES } from './hostile.ts'

/**
 * Every reader is linear in the file (CONTRACT §14, §24): each hostile 4 MiB file of each format
 * is read, or refused, in well under a second of CPU. The server-level test (hostile-server)
 * checks the same files over HTTP while another owner is served.
 */

const cpuMs = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

for (const [format, files] of Object.entries(HOSTILE)) {
  for (const [label, text] of files) {
    test(`${format}: ${label} (4 MiB) is read or refused in well under a second`, () => {
      expect(text.length).toBeGreaterThan(HOSTILE_BYTES * 0.98)
      const bytes = new TextEncoder().encode(text)
      const started = cpuMs()
      try {
        readAndResolve(bytes, { format: format as 'csv', dateFormat: format === 'csv' || format === 'qif' ? 'MM/DD/YY' : undefined })
      } catch (error) {
        // A refusal is a named error of the file, never anything else.
        if (error instanceof ApiError || !(error instanceof Error) || error.constructor === Error || error instanceof TypeError || error instanceof RangeError)
          throw error
      }
      expect(cpuMs() - started).toBeLessThan(500)
    })
  }
}
