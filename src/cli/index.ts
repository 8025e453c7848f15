import { existsSync, statSync } from 'node:fs'
import packageJson from '../../package.json' with { type: 'json' }
import { ConfigError, loadConfig } from '../config.ts'
import { makeNewFilesPrivate } from '../db/data-dir.ts'
import { closest } from '../platform/nearest.ts'
import { optional, parseFlags, UsageError, wantsHelp } from './args.ts'
import { backupGroup } from './backup.ts'
import { clusterGroup } from './cluster.ts'
import { adminCommand, Invocation } from './invocation.ts'
import { grantGroup } from './grant.ts'
import { keyGroup } from './key.ts'
import { importSpec } from './import.ts'
import { mcpSpec } from './mcp.ts'
import { ownerGroup } from './owner.ts'
import { restoreSpec } from './restore.ts'
import { serveSpec } from './serve.ts'
import { Session } from './session.ts'
import { allFlags, type CommandSpec, commandHelp, commandList, EXIT_CODES, type GroupSpec, groupHelp } from './spec.ts'

type Entry = CommandSpec | GroupSpec

const ENTRIES: Record<string, Entry> = {
  serve: serveSpec,
  mcp: mcpSpec,
  import: importSpec,
  owner: ownerGroup,
  key: keyGroup,
  grant: grantGroup,
  backup: backupGroup,
  restore: restoreSpec,
  cluster: clusterGroup,
}
const isGroup = (entry: Entry): entry is GroupSpec => 'commands' in entry
const groupSpecs = (group: GroupSpec) => (group.fallback ? [group.fallback, ...group.commands] : group.commands)

function topHelp(program: string): string {
  return [
    `pfin ${packageJson.version} — self-hosted personal-finance API server`,
    '',
    `Usage: pfin <command> [flags]   (run here as: ${program} <command>)`,
    '',
    'Server:',
    ...commandList([serveSpec, mcpSpec, importSpec]),
    '',
    'Owners, keys and grants:',
    ...commandList([...ownerGroup.commands, ...keyGroup.commands, ...grantGroup.commands]),
    '',
    'Backups:',
    ...commandList([...groupSpecs(backupGroup), restoreSpec]),
    '',
    'Cluster (several nodes behind HAProxy; not needed for one server):',
    ...commandList(clusterGroup.commands),
    '',
    '  pfin help [COMMAND] | --help',
    "      this text, or a command's: pfin help key create is pfin key create --help",
    '  pfin --version',
    '      the version',
    '',
    'Every command answers --help (or -h) with its flags and an example.',
    'Every admin command accepts --data-dir DIR (wins over DATA_DIR; default ./data) and --json (then it prints',
    'exactly one JSON object on stdout). Configuration: environment variables (see the docs).',
    EXIT_CODES,
  ].join('\n')
}

/** The command `words` name (`key create`, `backup`), and the arguments after them; or a group alone, for its help. */
function find(words: string[]): { spec: CommandSpec; args: string[] } | { group: GroupSpec } {
  const [first, sub, ...rest] = words
  const entry = first === undefined ? undefined : ENTRIES[first]
  if (!entry) {
    const near = first === undefined ? undefined : closest(first, Object.keys(ENTRIES))
    throw new UsageError(`unknown command "${first}"${near ? `; did you mean "${near}"?` : ''} (run "pfin help")`)
  }
  if (!isGroup(entry)) return { spec: entry, args: words.slice(1) }
  const names = entry.commands.map((spec) => spec.name.split(' ').at(-1) as string)
  const index = sub === undefined ? -1 : names.indexOf(sub)
  if (index >= 0) return { spec: entry.commands[index] as CommandSpec, args: rest }
  if (sub === '--help' || sub === '-h') return { group: entry }
  if (entry.fallback && (sub === undefined || sub.startsWith('-'))) return { spec: entry.fallback, args: words.slice(1) }
  if (sub === undefined || sub.startsWith('-')) throw new UsageError(`${entry.name} needs a command: ${names.join(', ')} (see: pfin ${entry.name} --help)`)
  const near = closest(sub, names)
  throw new UsageError(`unknown command "${entry.name} ${sub}"${near ? ` (did you mean "${near}"?)` : ''}; use ${names.join(', ')}`)
}

function exampleOf(spec: CommandSpec, invocation: Invocation): string {
  return typeof spec.example === 'function' ? spec.example(invocation) : invocation.command(spec.example)
}

function printHelp(words: string[]): number {
  const invocation = new Invocation(adminCommand(), null)
  if (words.length === 0) {
    console.log(topHelp(adminCommand()))
    return 0
  }
  const entry = words.length === 1 ? ENTRIES[words[0] as string] : undefined
  const found = entry && isGroup(entry) ? { group: entry } : find(words)
  console.log('group' in found ? groupHelp(found.group, invocation.command(found.group.example)) : commandHelp(found.spec, exampleOf(found.spec, invocation)))
  return 0
}

/**
 * A command that only works on data refuses a data folder that does not exist (or is a file),
 * naming it and creating nothing: a usage error. One that may create the folder leaves the
 * checks to `prepareDir`, whose failure to create or write it is a failure while running.
 */
function checkDataDir(spec: CommandSpec, dir: string, source: string): void {
  if (spec.dataDir !== 'needs') return
  if (!existsSync(dir)) throw new UsageError(`the data folder ${dir} (${source}) does not exist; nothing was created (check the path)`)
  if (!statSync(dir).isDirectory()) throw new UsageError(`the data folder ${dir} (${source}) is a file, not a folder`)
}

async function runCommand(spec: CommandSpec, args: string[]): Promise<number> {
  const flags = allFlags(spec).filter((flag) => flag.name !== 'help')
  const parsed = parseFlags(
    args,
    flags.filter((flag) => flag.value !== undefined).map((flag) => flag.name),
    flags.filter((flag) => flag.value === undefined).map((flag) => flag.name),
  )
  const expected = spec.positionals ?? []
  if (parsed.positionals.length !== expected.length) {
    const usage = `usage: pfin ${spec.name}${spec.usage ? ` ${spec.usage}` : ''}`
    throw new UsageError(
      parsed.positionals.length > expected.length && expected.length === 0
        ? `pfin ${spec.name} takes no arguments (got "${parsed.positionals[0]}"); a value with spaces needs quotes, as in --name "Ana Silva"`
        : usage,
    )
  }
  const dataDirFlag = spec.dataDir === 'none' ? undefined : optional(parsed.flags, 'data-dir')
  const fromEnv = process.env.DATA_DIR?.trim() || undefined
  const config = loadConfig({ ...process.env, ...(dataDirFlag === undefined ? {} : { DATA_DIR: dataDirFlag }) })
  checkDataDir(spec, config.dataDir, dataDirFlag !== undefined ? '--data-dir' : fromEnv ? 'DATA_DIR' : 'the default, ./data')
  const chosen = dataDirFlag !== undefined || fromEnv !== undefined
  const session = new Session(config, parsed.flags.json === true, new Invocation(adminCommand(), chosen ? config.dataDir : null), spec.dataDir === 'creates')
  try {
    return await spec.run(session, parsed)
  } finally {
    session.close()
  }
}

async function dispatch(argv: string[]): Promise<number> {
  const [first] = argv
  if (first === undefined || first === '--help' || first === '-h') return printHelp([])
  if (first === 'help') return printHelp(argv.slice(1))
  if (first === 'version' || first === '--version' || first === '-v') {
    console.log(argv.includes('--json') ? JSON.stringify({ version: packageJson.version }) : `pfin ${packageJson.version}`)
    return 0
  }
  const found = find(argv)
  if ('group' in found) return printHelp([found.group.name])
  if (wantsHelp(found.args)) return printHelp(argv.slice(0, argv.length - found.args.length))
  return await runCommand(found.spec, found.args)
}

/** Runs one command line and returns the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  makeNewFilesPrivate()
  try {
    return await dispatch(argv)
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) {
      console.error(`pfin: ${error.message}`)
      return 2
    }
    // Everything else (StartupError, DataDirError, BackupError, …): the message, exit 1.
    console.error(`pfin: ${error instanceof Error ? error.message : String(error)}`)
    return 1
  }
}
