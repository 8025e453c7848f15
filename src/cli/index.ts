import { ConfigError, loadConfig } from '../config.ts'
import { ControlStore } from '../db/control/store.ts'
import { DataDirError, makeNewFilesPrivate } from '../db/data-dir.ts'
import { TenantRegistry } from '../db/tenant/registry.ts'
import { UsageError } from './args.ts'
import { BackupError } from '../ops/backup.ts'
import { backupCommand, restoreCommand } from './backup.ts'
import { keyCommand } from './key.ts'
import { mcpBridge } from './mcp.ts'
import { createOutput } from './output.ts'
import { ownerCommand } from './owner.ts'
import { StartupError } from '../server.ts'
import { serve } from './serve.ts'

const HELP = `pfin — self-hosted personal-finance API server

Usage:
  pfin serve                                   start the API server
  pfin owner create --name N [--email E] [--country CC] [--currency CUR] [--language TAG] [--tier pro|free]
  pfin owner list
  pfin owner export --owner ID --out FILE      consistent copy of the owner's database
  pfin key create --owner ID [--scopes s1,s2 | --all-scopes] [--name LABEL] [--expires-in 30d]
  pfin key list --owner ID
  pfin key revoke KEY_ID
  pfin backup --out DIR                        consistent, verified copy of every database (safe while serving)
  pfin backup verify DIR                       re-check a backup against its manifest
  pfin restore --from DIR [--owner ID]         put a backup back (the server must be stopped)
  pfin mcp                                     MCP over stdio for desktop agents: forwards to PFIN_URL with PFIN_API_KEY

Every admin command accepts --json and then prints exactly one JSON object.
Configuration comes from the environment (PORT, HOST, DATA_DIR, …); see the README.`

/** Runs one command line and returns the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const [group, sub, ...rest] = argv
  makeNewFilesPrivate()
  try {
    if (group === 'serve' || group === undefined) return await serve()
    if (group === 'mcp') return await mcpBridge()
    if (group === 'backup' || group === 'restore') {
      const json = argv.includes('--json')
      const ctx = { dataDir: loadConfig().dataDir, out: createOutput(json), json }
      return group === 'backup' ? await backupCommand(ctx, argv.slice(1)) : await restoreCommand(ctx, argv.slice(1))
    }
    if (group === 'help' || group === '--help' || group === '-h') {
      console.log(HELP)
      return 0
    }
    if (group !== 'owner' && group !== 'key') throw new UsageError(`unknown command "${group}"; run "pfin help"`)
    const config = loadConfig()
    const control = new ControlStore(config.dataDir)
    const tenants = new TenantRegistry(config.dataDir, 4)
    try {
      const ctx = { control, tenants, out: createOutput(rest.includes('--json')) }
      if (group === 'owner') ownerCommand(ctx, sub, rest)
      else await keyCommand(ctx, sub, rest)
    } finally {
      tenants.closeAll()
      control.close()
    }
    return 0
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) {
      console.error(`pfin: ${error.message}`)
      return 2
    }
    if (error instanceof StartupError || error instanceof DataDirError || error instanceof BackupError) {
      console.error(`pfin: ${error.message}`)
      return 1
    }
    console.error(`pfin: ${error instanceof Error ? error.message : String(error)}`)
    return 1
  }
}
