import { isAbsolute, relative } from 'node:path'

/** True inside a `bun build --compile` binary, whose entry point lives in Bun's embedded file system. */
export function isCompiledBinary(): boolean {
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

/** The argv that runs this same program again (another admin command from the server). */
export function selfCommand(): string[] {
  return isCompiledBinary() ? [process.execPath] : [process.execPath, Bun.main]
}
