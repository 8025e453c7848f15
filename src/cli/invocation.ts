import { isAbsolute, relative } from 'node:path'
import { isCompiledBinary } from '../platform/program.ts'

/**
 * How the user runs admin commands, for the hints we print: `bun run admin` from a checkout,
 * otherwise the binary as it can be typed from the current directory.
 */
export function adminCommand(): string {
  if (!isCompiledBinary()) return 'bun run admin'
  const path = relative(process.cwd(), process.execPath)
  return path.startsWith('..') || isAbsolute(path) ? process.execPath : `./${path}`
}
