import { parseArgs } from 'node:util'
import { closest } from '../platform/nearest.ts'

/** A mistake in how a command was called: one line on stderr, exit code 2. */
export class UsageError extends Error {}

export type Flags = Record<string, string | boolean | undefined>

/** Parses `--flag value` options, rejecting unknown ones with a usage error. */
export function parseFlags(args: string[], strings: string[], booleans: string[] = []): { flags: Flags; positionals: string[] } {
  const options: Record<string, { type: 'string' | 'boolean' }> = {}
  for (const name of strings) options[name] = { type: 'string' }
  for (const name of booleans) options[name] = { type: 'boolean' }
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof options; allowPositionals: true; strict: true; tokens: true }>>
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true, tokens: true })
  } catch (error) {
    throw new UsageError(explainArgumentError(error as Error, Object.keys(options)))
  }
  // A flag given twice (`--name A --name B`) is a mistake to report, not a value to pick.
  const seen = new Set<string>()
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option') continue
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given more than once`)
    seen.add(token.name)
  }
  return { flags: parsed.values as Flags, positionals: parsed.positionals }
}

/** node:util's parseArgs messages, in one line a person can act on (with a "did you mean"). */
function explainArgumentError(error: Error, known: string[]): string {
  const message = error.message.split('\n')[0] ?? 'invalid arguments'
  const unknown = /Unknown option '(-{1,2}[^']+)'/.exec(message)
  if (unknown) {
    const given = (unknown[1] as string).replace(/^-+/, '').split('=')[0] as string
    const near = closest(given, known)
    return `unknown flag --${given}${near ? `; did you mean --${near}?` : ''} (known: ${known.map((name) => `--${name}`).join(', ')})`
  }
  const missing = /Option '(?:-\w, )?--([\w-]+) <value>' argument missing/.exec(message)
  if (missing) return `--${missing[1]} needs a value`
  return message.replace(/\. To specify a positional argument.*$/, '')
}

export function required(flags: Flags, name: string): string {
  const value = flags[name]
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`)
  return value.trim()
}

export function optional(flags: Flags, name: string): string | undefined {
  const value = flags[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} needs a value`)
  return value.trim()
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }

/** Whether the arguments ask for help: `--help` or `-h` anywhere before a `--`. */
export function wantsHelp(args: string[]): boolean {
  const end = args.indexOf('--')
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h')
}

/** `30d`, `12h`, `90m`, `2w`, `45s` → milliseconds. */
export function parseDuration(text: string, flag = 'expires-in'): number {
  const m = /^(\d{1,6})([smhdw])$/.exec(text)
  if (!m || Number(m[1]) === 0) throw new UsageError(`--${flag} must look like 30d, 12h, 90m, 2w or 45s (got "${text}")`)
  return Number(m[1]) * (UNITS[m[2] as string] as number)
}
