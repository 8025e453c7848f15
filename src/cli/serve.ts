import { loadConfig } from '../config.ts'
import { createApp, createPlatform, startMaintenance } from '../server.ts'
import { MAX_BODY_BYTES } from '../platform/body.ts'
import { adminCommand } from './invocation.ts'

/** `serve`: listens until SIGTERM/SIGINT, then lets in-flight requests finish and closes the databases. */
export async function serve(): Promise<number> {
  const config = loadConfig()
  const platform = createPlatform(config)
  const app = createApp(platform)
  // Bun's own limit sits above ours so oversized bodies still get a problem+json 413.
  app.listen({ port: config.port, hostname: config.host, maxRequestBodySize: MAX_BODY_BYTES * 4 })
  const server = app.server
  if (!server) throw new Error('server failed to start')
  const stopMaintenance = startMaintenance(platform)
  console.log(`pfin listening on http://${config.host}:${server.port}`)
  if (!platform.control.hasOwners()) {
    const admin = adminCommand()
    console.log(`No owner yet. Create one and a key:\n  ${admin} owner create --name "Your Name"\n  ${admin} key create --owner <ownerId>`)
  }
  return await new Promise<number>((resolve) => {
    let stopping = false
    const stop = async () => {
      if (stopping) return
      stopping = true
      await server.stop(false)
      stopMaintenance()
      platform.tenants.closeAll()
      platform.control.close()
      resolve(0)
    }
    process.once('SIGTERM', stop)
    process.once('SIGINT', stop)
  })
}
