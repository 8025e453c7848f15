import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import {
  Client,
  type OAuthClientInformationMixed,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client'
import { startTestServer, type TestServer } from '../support/harness.ts'
import { givePassword, openSignIn, PASSWORD, submitSignIn } from './native-app.ts'

/**
 * A hosted agent attaches to /mcp as MCP's authorization spec says (CONTRACT §17, §28), with the
 * official MCP client's own OAuth support: the 401 names the resource metadata, which names
 * pfin as the authorization server; the client registers itself, the person signs in on the
 * page, and the client lists the tools its grant allows.
 */

// Sign-ins run argon2 (and some tests many): seconds on a busy machine.
setDefaultTimeout(60_000)

let server: TestServer

beforeAll(async () => {
  server = await startTestServer({ env: { ANON_RATE_LIMIT_PER_MINUTE: '1000' } })
  const owner = await server.owner({ name: 'Ana' })
  await givePassword(server, owner.id, 'ana')
})
afterAll(() => server?.stop())

/** What a connector keeps between runs, in memory; "the browser" is the form filled in with fetch. */
class Connector implements OAuthClientProvider {
  info?: OAuthClientInformationMixed
  saved?: OAuthTokens
  verifier = ''
  discovery?: OAuthDiscoveryState
  callback?: URL
  readonly redirectUrl = 'http://127.0.0.1:33418/oauth/callback'
  readonly clientMetadata = {
    client_name: 'Agent Connector',
    redirect_uris: ['http://127.0.0.1:33418/oauth/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  }
  clientInformation() {
    return this.info
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state
  }
  discoveryState() {
    return this.discovery
  }
  async redirectToAuthorization(url: URL) {
    // The person: opens the page, reads what is asked, allows only reading.
    const page = await openSignIn(url)
    expect(page.html).toContain('Agent Connector')
    const answer = await submitSignIn(server, page, { login: 'ana', password: PASSWORD, scopes: ['me:read', 'accounts:read', 'transactions:read'] })
    expect(answer.status).toBe(303)
    this.callback = new URL(answer.headers.get('location') as string)
  }
}

test('an MCP client finds pfin from a 401, registers, signs in and lists the tools its grant allows', async () => {
  const connector = new Connector()
  const url = new URL(`${server.url}/mcp`)
  const seen: { url: string; status: number; challenge: string | null }[] = []
  const recording = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init)
    seen.push({ url: String(input instanceof Request ? input.url : input), status: response.status, challenge: response.headers.get('www-authenticate') })
    return response
  }
  const first = new StreamableHTTPClientTransport(url, { authProvider: connector, fetch: recording })
  const client = new Client({ name: 'agent', version: '1.0.0' })
  // No token yet: /mcp answers 401 naming its metadata; the client registers and sends the person to sign in.
  await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError)
  expect(seen[0]).toEqual({
    url: `${server.url}/mcp`,
    status: 401,
    challenge: `Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`,
  })
  expect(connector.discovery?.authorizationServerUrl).toBe(server.url)
  expect(connector.info?.client_id).toMatch(/^cli_/)
  expect(connector.callback?.searchParams.get('code')).toMatch(/^pfc_/)
  await first.finishAuth(connector.callback?.searchParams as URLSearchParams)
  expect(connector.saved?.access_token).toMatch(/^pfa_/)

  const transport = new StreamableHTTPClientTransport(url, { authProvider: connector })
  const agent = new Client({ name: 'agent', version: '1.0.0' })
  await agent.connect(transport)
  const { tools } = await agent.listTools()
  const names = tools.map((tool) => tool.name).sort()
  // Read-only scopes: the reading tools of accounts and transactions, no writes.
  expect(names).toContain('list_accounts')
  expect(names).toContain('search_transactions')
  expect(names).not.toContain('upsert_account')
  expect(names).not.toContain('upsert_transaction')
  const result = await agent.callTool({ name: 'list_accounts', arguments: {} })
  expect(result.isError).toBeFalsy()
  await agent.close()
})
