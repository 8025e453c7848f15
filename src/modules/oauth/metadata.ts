import { SCOPES } from '../../platform/scopes.ts'

/**
 * The documents an OAuth client reads first (CONTRACT §28): the authorization server's metadata
 * (RFC 8414) and each protected resource's (RFC 9728), all derived from PUBLIC_URL.
 */

export function authorizationServerMetadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${issuer}/docs`,
  }
}

/** The resources a token is good for; both take the same tokens. */
export const RESOURCES = ['v1', 'mcp'] as const
export type Resource = (typeof RESOURCES)[number]

export function protectedResourceMetadata(issuer: string, resource: Resource | null) {
  return {
    resource: resource ? `${issuer}/${resource}` : issuer,
    authorization_servers: [issuer],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: resource === 'mcp' ? 'pfin MCP server' : 'pfin API',
    resource_documentation: `${issuer}/docs`,
  }
}

/** Whether an RFC 8707 `resource` parameter names pfin: its origin, `/v1` or `/mcp` (a trailing slash allowed). */
export function isOwnResource(issuer: string, resource: string): boolean {
  const trimmed = resource.replace(/\/+$/, '')
  return trimmed === issuer || RESOURCES.some((name) => trimmed === `${issuer}/${name}`)
}
