import type { Flags } from './args.ts'
import type { Invocation } from './invocation.ts'
import type { Session } from './session.ts'

/**
 * One command as the CLI knows it: what `--help` prints and what the dispatcher checks before
 * anything runs (its flags, its arguments, its use of the data folder), so every command gets
 * the same help, the same usage errors and the same `--data-dir` from one place.
 */

export interface FlagSpec {
  name: string
  /** The value's placeholder (`N`, `DIR`); absent for a switch. */
  value?: string
  about: string
}

/**
 * What a command does with the data folder: `creates` may make it (owner create, serve,
 * restore); `needs` refuses one that does not exist, creating nothing; `ignores` accepts
 * `--data-dir` (one alias can serve every admin command) and reads no data folder; `none`
 * is not an admin command and takes no `--data-dir`.
 */
export type DataDirUse = 'creates' | 'needs' | 'ignores' | 'none'

export interface CommandInput {
  flags: Flags
  positionals: string[]
}

export interface CommandSpec {
  /** The words after the program: `owner create`, `backup`, `backup verify`. */
  name: string
  summary: string
  /** The arguments after the name, as usage lines show them. */
  usage: string
  flags: FlagSpec[]
  /** Placeholders of the positional arguments, each required (`KEY_ID`); none allowed when absent. */
  positionals?: string[]
  /** An example's arguments, after the program; or the whole example line, given the invocation. */
  example: string | ((invocation: Invocation) => string)
  dataDir: DataDirUse
  /** False for a command that prints no result (serve): no --json. */
  json?: boolean
  /** Further lines for `--help` (defaults, what is printed, exit codes of note). */
  notes?: string
  run(session: Session, input: CommandInput): Promise<number> | number
}

export interface GroupSpec {
  name: string
  summary: string
  commands: CommandSpec[]
  /** The command run when the word after the group names none of its commands (`backup --out DIR`). */
  fallback?: CommandSpec
  example: string
}

const DATA_DIR_FLAG: FlagSpec = { name: 'data-dir', value: 'DIR', about: 'the data folder (wins over DATA_DIR; default ./data)' }
const JSON_FLAG: FlagSpec = { name: 'json', about: 'print exactly one JSON object on stdout' }
const HELP_FLAG: FlagSpec = { name: 'help', about: 'this text (also -h)' }

/** Every flag a command accepts: its own, then the ones all admin commands share. */
export function allFlags(spec: CommandSpec): FlagSpec[] {
  const dataDir = spec.dataDir === 'ignores' ? { ...DATA_DIR_FLAG, about: 'accepted, not used: this command reads no data folder' } : DATA_DIR_FLAG
  return [...spec.flags, ...(spec.dataDir === 'none' ? [] : [dataDir]), ...(spec.json === false ? [] : [JSON_FLAG]), HELP_FLAG]
}

export const EXIT_CODES = [
  'Exit codes: 0 done; 2 a usage error, and nothing was changed (a bad flag or value, an unknown id, a path that is',
  'missing or in the way, --yes not given); 1 the command failed while running (a damaged file, a server holding the',
  'data folder, a full disk): the message on stderr says which.',
].join('\n')

function flagLines(flags: FlagSpec[]): string[] {
  const left = flags.map((flag) => `--${flag.name}${flag.value ? ` ${flag.value}` : ''}`)
  const width = Math.max(...left.map((text) => text.length)) + 2
  return flags.map((flag, i) => `  ${(left[i] as string).padEnd(width)}${flag.about}`)
}

/** `--help` of one command; `example` is written the way the person runs pfin, so it can be pasted. */
export function commandHelp(spec: CommandSpec, example: string): string {
  const lines = [
    `pfin ${spec.name} — ${spec.summary}`,
    '',
    `Usage: pfin ${spec.name}${spec.usage ? ` ${spec.usage}` : ''}`,
    '',
    'Flags:',
    ...flagLines(allFlags(spec)),
  ]
  if (spec.notes) lines.push('', spec.notes)
  lines.push('', 'Example:', `  ${example}`, '', EXIT_CODES)
  return lines.join('\n')
}

/** Each command's usage line and summary, for group and top-level help. */
export function commandList(specs: CommandSpec[]): string[] {
  return specs.flatMap((spec) => [`  pfin ${spec.name}${spec.usage ? ` ${spec.usage}` : ''}`, `      ${spec.summary}`])
}

/** A group's help: its commands; for a group that is itself a command (`backup --out DIR`), that command's help first. */
export function groupHelp(group: GroupSpec, example: string): string {
  if (group.fallback) {
    return [
      commandHelp(group.fallback, example),
      '',
      `Also:`,
      ...commandList(group.commands),
      `Each answers --help: pfin ${group.commands[0]?.name} --help`,
    ].join('\n')
  }
  return [
    `pfin ${group.name} — ${group.summary}`,
    '',
    'Commands:',
    ...commandList(group.commands),
    '',
    `Each one answers --help with its flags: pfin ${group.commands[0]?.name} --help`,
    '',
    'Example:',
    `  ${example}`,
  ].join('\n')
}
