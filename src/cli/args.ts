import { parseArgs } from 'node:util'

/** A mistake in how a command was called: one line on stderr, exit code 2. */
export class UsageError extends Error {}

export type Flags = Record<string, string | boolean | undefined>

/** Parses `--flag value` options, rejecting unknown ones with a usage error. */
export function parseFlags(args: string[], strings: string[], booleans: string[] = []): { flags: Flags; positionals: string[] } {
  const options: Record<string, { type: 'string' | 'boolean' }> = { json: { type: 'boolean' } }
  for (const name of strings) options[name] = { type: 'string' }
  for (const name of booleans) options[name] = { type: 'boolean' }
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true })
    return { flags: values as Flags, positionals }
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0] ?? 'invalid arguments')
  }
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

/** `30d`, `12h`, `90m`, `2w`, `45s` → milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d{1,6})([smhdw])$/.exec(text)
  if (!m || Number(m[1]) === 0) throw new UsageError(`--expires-in must look like 30d, 12h, 90m, 2w or 45s (got "${text}")`)
  return Number(m[1]) * (UNITS[m[2] as string] as number)
}
