/**
 * This program as the operating system runs it: the scheduled backup starts `pfin backup` as
 * a child, and the CLI's hints name the command a person typed. Kept below ops and cli, which
 * both need it.
 */

/** True inside a `bun build --compile` binary, whose entry point lives in Bun's embedded file system. */
export function isCompiledBinary(): boolean {
  return Bun.main.startsWith('/$bunfs/') || Bun.main.startsWith('B:/~BUN/')
}

/** The argv that runs this same program again (another admin command from the server). */
export function selfCommand(): string[] {
  return isCompiledBinary() ? [process.execPath] : [process.execPath, Bun.main]
}
