import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestServer, type TestServer } from '../support/harness.ts'
import { givePassword, openSignIn, PASSWORD, submitSignIn } from '../oauth/native-app.ts'

/**
 * The client README's "Sign-in with PKCE for a native app" runs as written: its code block,
 * with the app's own parts (`baseUrl`, `redirectUri`, `openSystemBrowser`) given by this test,
 * which plays the browser (the page's form filled in as a person would). It pins that the
 * README's flow works against the server and that `apiKey` as a function picks up a refreshed
 * token.
 */

setDefaultTimeout(60_000)

const README = join(import.meta.dir, '../../clients/typescript/README.md')
const CLIENT = join(import.meta.dir, '../../clients/typescript/src/index.ts')

function signInBlock(readme: string): string {
  const section = readme.slice(readme.indexOf('**Sign-in with PKCE for a native app.**'))
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
  if (!block) throw new Error('the README has no sign-in code block')
  return block
}

let server: TestServer
let dir: string
beforeAll(async () => {
  server = await startTestServer({ env: { ANON_RATE_LIMIT_PER_MINUTE: '1000' } })
  dir = mkdtempSync(join(tmpdir(), 'pfin-readme-signin-'))
})
afterAll(async () => {
  await server?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe('the client README’s sign-in', () => {
  test('registers, signs in with PKCE, calls the API with the token, refreshes, and the client sends the refreshed token', async () => {
    const owner = await server.owner({ name: 'Ana' })
    await givePassword(server, owner.id, 'ana@example.com')
    const redirects: URL[] = []
    const listener = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (request) => {
        redirects.push(new URL(request.url))
        return new Response('You can go back to the app.')
      },
    })
    try {
      const app = {
        baseUrl: server.url,
        redirectUri: `http://127.0.0.1:${listener.port}/callback`,
        // The system browser: the page, the person's form, then pfin's redirect followed to the app.
        openSystemBrowser: async (url: URL) => {
          const page = await openSignIn(url)
          const answer = await submitSignIn(server, page, { login: 'ana@example.com', password: PASSWORD })
          if (answer.status !== 303) throw new Error(`sign-in answered ${answer.status}`)
          await fetch(answer.headers.get('location') as string)
          return redirects.at(-1) as URL
        },
      }
      ;(globalThis as Record<string, unknown>).__readmeApp = app
      const source = `import { createPfinClient } from ${JSON.stringify(CLIENT)}
const { baseUrl, redirectUri, openSystemBrowser } = (globalThis as any).__readmeApp
${signInBlock(await Bun.file(README).text())}
export const result = { me, tokens, first: firstAccess, afterRefresh: await signedIn.get('/v1/me') }
`.replace('const signedIn = createPfinClient(', 'const firstAccess = tokens.access_token\nconst signedIn = createPfinClient(')
      const file = join(dir, 'sign-in.ts')
      writeFileSync(file, source)
      // Which token each /v1/me call carried (the client's default fetch is globalThis.fetch, read per call).
      const sent: string[] = []
      const realFetch = globalThis.fetch
      globalThis.fetch = Object.assign(
        (input: string | URL | Request, init?: RequestInit) => {
          if (input instanceof Request && new URL(input.url).pathname === '/v1/me') sent.push(input.headers.get('authorization') ?? '')
          return realFetch(input, init)
        },
        { preconnect: realFetch.preconnect },
      )
      // biome-ignore lint/suspicious/noExplicitAny: the README module's exports
      let result: any
      try {
        ;({ result } = await import(file))
      } finally {
        globalThis.fetch = realFetch
      }
      expect(result.me).toMatchObject({ id: owner.id, accessMode: 'self' })
      expect(result.me.scopes).toEqual(['me:read', 'accounts:read', 'transactions:read', 'transactions:write'])
      // The refresh rotated the tokens, and the same client sent the new access token from then on.
      expect(result.tokens.access_token).not.toBe(result.first)
      expect(result.afterRefresh.data.id).toBe(owner.id)
      expect(sent).toEqual([`Bearer ${result.first}`, `Bearer ${result.tokens.access_token}`])
    } finally {
      listener.stop(true)
    }
  })
})
