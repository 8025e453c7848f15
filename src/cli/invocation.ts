import { basename, isAbsolute, relative } from 'node:path'
import { isCompiledBinary } from '../platform/program.ts'

/**
 * How the user runs admin commands, for the hints we print: `bun run admin` from a checkout,
 * otherwise the binary as it can be typed: its name when PATH finds it, else its path from the
 * current directory.
 */
export function adminCommand(): string {
  if (!isCompiledBinary()) return 'bun run admin'
  const name = basename(process.execPath)
  if (Bun.which(name) === process.execPath) return name
  const path = relative(process.cwd(), process.execPath)
  return shellQuote(path.startsWith('..') || isAbsolute(path) ? process.execPath : `./${path}`)
}

/** A word as a POSIX shell reads it back unchanged. */
export function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`
}

/**
 * The command lines hints print: the program as the person ran it, then the arguments, then
 * `--data-dir` when the data folder was chosen (by flag or DATA_DIR), so that a hint pasted in
 * another shell or directory reaches the same data.
 */
export class Invocation {
  constructor(
    readonly program: string,
    /** The data folder to repeat, or null when it is the default. */
    readonly dataDir: string | null,
  ) {}

  /** The same, without `bun run` echoing the script's command line: for `eval "$(…)"` and pipes. */
  quiet(): Invocation {
    return this.program === 'bun run admin' ? new Invocation('bun run --silent admin', this.dataDir) : this
  }

  /** `args` are already quoted as the shell needs them. */
  command(args: string): string {
    return `${this.program} ${args}${this.dataDir === null ? '' : ` --data-dir ${shellQuote(this.dataDir)}`}`
  }
}
