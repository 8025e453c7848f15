import { isAbsolute, relative } from 'node:path'

/** True inside a `bun build --compile` binary, whose entry point lives in Bun's embedded file system. */
function isCompiledBinary(): boolean {
  return Bun.main.startsWith('/$bunfs/') || Bun.main.startsWith('B:/~BUN/')
}

/**
 * How the user runs admin commands, for the hints we print: `bun run admin` from a checkout,
 * otherwise the binary as it can be typed from the current directory.
 */
export function adminCommand(): string {
  if (!isCompiledBinary()) return 'bun run admin'
  const path = relative(process.cwd(), process.execPath)
  return path.startsWith('..') || isAbsolute(path) ? process.execPath : `./${path}`
}
