import packageJson from '../../package.json' with { type: 'json' }
import { ConfigError, loadConfig } from '../config.ts'
import { ControlStore } from '../db/control/store.ts'
import { makeNewFilesPrivate } from '../db/data-dir.ts'
import { TenantRegistry } from '../db/tenant/registry.ts'
import { closest } from '../platform/nearest.ts'
import { UsageError } from './args.ts'
import { backupCommand, restoreCommand } from './backup.ts'
import { keyCommand } from './key.ts'
import { mcpBridge } from './mcp.ts'
import { createOutput } from './output.ts'
import { ownerCommand } from './owner.ts'
import { serve } from './serve.ts'

const HELP = `pfin ${packageJson.version} — self-hosted personal-finance API server

Usage: pfin <command> [flags]

Server:
  pfin serve [--port N] [--host ADDR] [--data-dir DIR]   start the API server (flags win over PORT, HOST, DATA_DIR)
  pfin mcp                                     MCP over stdio for desktop agents: forwards to PFIN_URL with PFIN_API_KEY

Owners and keys:
  pfin owner create --name N [--email E] [--country CC] [--currency CUR] [--language TAG] [--tier pro|free]
  pfin owner list
  pfin owner update --owner ID [--name N] [--email E] [--country CC] [--currency CUR] [--language TAG] [--tier pro|free]
  pfin owner delete --owner ID [--yes]         without --yes: only shows what would be deleted
  pfin owner export --owner ID --out FILE      consistent copy of the owner's database
  pfin key create --owner ID [--scopes s1,s2 | --all-scopes] [--name LABEL] [--expires-in 30d]
  pfin key list --owner ID
  pfin key revoke KEY_ID
  pfin key rotate KEY_ID [--grace 24h]         a new key with the same scopes; the old one stops after the grace period

Backups:
  pfin backup --out DIR                        consistent, verified copy of every database (safe while serving)
  pfin backup verify DIR                       re-check a backup against its manifest
  pfin restore --from DIR [--owner ID]         put a backup back (the server must be stopped)

  pfin help | --help                           this text
  pfin --version                               the version

Every admin command accepts --json and then prints exactly one JSON object.
Bad arguments: one line on stderr, exit code 2. Configuration: environment variables (see the README).`

const COMMANDS = ['serve', 'mcp', 'owner', 'key', 'backup', 'restore', 'help', 'version']

/** Commands over the control database and owner files: opened for the command, closed after. */
async function storeCommand(group: 'owner' | 'key', sub: string | undefined, rest: string[]): Promise<number> {
  const config = loadConfig()
  const control = new ControlStore(config.dataDir)
  const tenants = new TenantRegistry(config.dataDir, 4)
  try {
    const ctx = { control, tenants, dataDir: config.dataDir, out: createOutput(rest.includes('--json')) }
    if (group === 'owner') ownerCommand(ctx, sub, rest)
    else await keyCommand(ctx, sub, rest)
    return 0
  } finally {
    tenants.closeAll()
    control.close()
  }
}

async function dispatch(argv: string[]): Promise<number> {
  const [group, sub, ...rest] = argv
  switch (group) {
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(HELP)
      return 0
    case 'version':
    case '--version':
    case '-v':
      console.log(argv.includes('--json') ? JSON.stringify({ version: packageJson.version }) : `pfin ${packageJson.version}`)
      return 0
    case 'serve':
      return await serve(argv.slice(1))
    case 'mcp':
      return await mcpBridge()
    case 'backup':
    case 'restore': {
      const json = argv.includes('--json')
      const ctx = { dataDir: loadConfig().dataDir, out: createOutput(json), json }
      return group === 'backup' ? await backupCommand(ctx, argv.slice(1)) : await restoreCommand(ctx, argv.slice(1))
    }
    case 'owner':
    case 'key':
      return await storeCommand(group, sub, rest)
    default: {
      const near = closest(group, COMMANDS)
      throw new UsageError(`unknown command "${group}"${near ? `; did you mean "${near}"?` : ''} (run "pfin help")`)
    }
  }
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
