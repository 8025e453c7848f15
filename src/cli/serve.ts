import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, loadConfig } from '../config.ts'
import { LITESTREAM_CONFIG } from '../db/data-dir.ts'
import { closePlatform, createApp, createPlatform, listen, startMaintenance } from '../server.ts'
import { LitestreamSupervisor } from '../ops/litestream.ts'
import { scheduleBackups } from '../ops/schedule.ts'
import { type Flags, optional, UsageError } from './args.ts'
import type { Session } from './session.ts'
import type { CommandSpec } from './spec.ts'

/** Signals that stop the server gracefully. SIGHUP too: a closed terminal or a service manager's reload must not lose counts. */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const

/** How long in-flight requests get to finish before their connections are closed. */
const DRAIN_MS = 10_000

/**
 * `serve`: listens until a stop signal, then lets in-flight requests finish, writes the
 * counters and last-use times, and closes the databases (CONTRACT §14).
 */
export const serveSpec: CommandSpec = {
  name: 'serve',
  summary: 'start the API server; it prints its URL, and how to make the first owner while there is none',
  usage: '[--port N] [--host ADDR] [--data-dir DIR]',
  flags: [
    { name: 'port', value: 'N', about: 'the port to listen on (wins over PORT; default 3000; 0: any free port, printed)' },
    { name: 'host', value: 'ADDR', about: 'the address to listen on (wins over HOST; default 0.0.0.0)' },
  ],
  example: 'serve --port 3001 --data-dir /var/lib/pfin',
  dataDir: 'creates',
  json: false,
  notes:
    'Other settings come from the environment (RATE_LIMIT_PER_MINUTE, BACKUP_DIR, LOG_FORMAT, …; see the docs).\nSIGTERM, SIGINT or SIGHUP stop it gracefully.',
  run: (session, { flags }) => serve(session, flags),
}

async function serve(session: Session, flags: Flags): Promise<number> {
  // Flags win over the environment: `pfin serve --port 3001` does what it says.
  const fromFlags: Record<string, string> = { DATA_DIR: session.dataDir }
  for (const [flag, variable] of [
    ['port', 'PORT'],
    ['host', 'HOST'],
  ] as const) {
    const value = optional(flags, flag)
    if (value !== undefined) fromFlags[variable] = value
  }
  let config: ReturnType<typeof loadConfig>
  try {
    config = loadConfig({ ...process.env, ...fromFlags })
  } catch (error) {
    // A bad --port reads better in the flag's own words than as the PORT variable.
    throw error instanceof ConfigError && fromFlags.PORT !== undefined && /PORT/.test(error.message)
      ? new UsageError(`--port must be a whole number from 0 to 65535 (got "${fromFlags.PORT}")`)
      : error
  }
  const platform = createPlatform(config)
  let server: ReturnType<typeof listen>
  try {
    server = listen(createApp(platform), config)
  } catch (error) {
    closePlatform(platform)
    throw error
  }
  const stopMaintenance = startMaintenance(platform)
  const stopBackups = scheduleBackups(config, (message) => console.error(`pfin: ${message}`))
  // A cluster node replicates its owners with Litestream, restarted as they change (CONTRACT §31).
  const node = platform.cluster
  const replica = config.cluster?.replica
  // Without replication, admin commands over this folder may checkpoint again (their sign is Litestream's configuration).
  if (!replica) rmSync(join(config.dataDir, LITESTREAM_CONFIG), { force: true })
  const litestream =
    node && replica
      ? new LitestreamSupervisor(config.dataDir, replica, (message) => console.error(`pfin: ${message}`), config.cluster?.replicaIntervalSeconds)
      : null
  if (node && litestream) {
    node.onChange(() => litestream.update(node.owners()))
    litestream.update(node.owners())
  }
  const stopped = new Promise<number>((resolve) => {
    let stopping = false
    const stop = async (signal: string) => {
      // A service manager signals the whole process group and `bun run` forwards what it gets,
      // so the same stop may arrive several times: the first one runs, the rest are ignored
      // (the listener stays installed so that a repeat cannot kill the process half way).
      if (stopping) return
      stopping = true
      console.log(`pfin: ${signal} received, stopping`)
      const drained = server.stop(false)
      const forced = new Promise<void>((done) => setTimeout(done, DRAIN_MS).unref())
      await Promise.race([drained, forced])
      await server.stop(true)
      let code = 0
      try {
        stopBackups()
        stopMaintenance()
        closePlatform(platform)
        await litestream?.stop()
      } catch (error) {
        console.error(`pfin: could not close cleanly: ${String(error)}`)
        code = 1
      }
      resolve(code)
    }
    for (const name of STOP_SIGNALS) process.on(name, () => void stop(name))
  })
  // Announced only once a stop signal is handled: whoever waits for this line may signal at once.
  // An IPv6 literal goes in brackets, so the line holds a URL a script can use as it is.
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  console.log(`pfin listening on http://${host}:${server.port}`)
  if (!platform.control.hasOwners()) {
    console.log(`No owner yet. Create one and its first API key:\n  ${session.invocation.command('owner create --name "Your Name" --with-key')}`)
  }
  return await stopped
}
