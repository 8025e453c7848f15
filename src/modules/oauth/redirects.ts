/**
 * Redirect URIs (CONTRACT §28; RFC 8252 for native apps, RFC 9700 §4.1.3 for exact matching): what a client may
 * register, and how a request's URI is matched against what it registered.
 */

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost'])
/** Schemes that are not an app's: a browser would run, show or fetch them itself. */
const NOT_APP_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:', 'filesystem:', 'ws:', 'wss:', 'ftp:', 'mailto:'])

const isLoopback = (url: URL) => url.protocol === 'http:' && LOOPBACK.has(url.hostname)

/** Why `uri` cannot be registered, or null when it can. */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > 2000) return 'is longer than 2000 characters'
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return 'is not an absolute URI'
  }
  if (uri.includes('#')) return 'must not have a fragment'
  if (url.username || url.password) return 'must not carry a user name or password'
  if (url.protocol === 'https:') return null
  if (url.protocol === 'http:')
    return isLoopback(url) ? null : 'uses http to a host that is not a loopback address (use https, or http://127.0.0.1 for a native app)'
  if (NOT_APP_SCHEMES.has(url.protocol)) return `uses the ${url.protocol} scheme, which is not an app's`
  // A private-use scheme of a native app (RFC 8252 §7.1): com.example.app:/callback.
  return null
}

/**
 * Whether `requested` is one of `registered`: the same text exactly, except that a loopback
 * URI matches on any port (RFC 8252 §7.3: a native app listens on a port the system gives it).
 */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true
  let url: URL
  try {
    url = new URL(requested)
  } catch {
    return false
  }
  if (!isLoopback(url) || requested.includes('#')) return false
  const portless = (u: URL) => `${u.protocol}//${u.hostname}${u.pathname}${u.search}`
  const wanted = portless(url)
  return registered.some((candidate) => {
    try {
      const other = new URL(candidate)
      return isLoopback(other) && portless(other) === wanted
    } catch {
      return false
    }
  })
}

/** The CSP `form-action` source that lets the consent form's answer redirect to `uri`. */
export function formActionSource(uri: string): string {
  const url = new URL(uri)
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol
}

/** How the consent page names where the person will be sent: the host, or the app's scheme. */
export function redirectShown(uri: string): string {
  const url = new URL(uri)
  if (isLoopback(url)) return `an app on this device (${url.host})`
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.host : `an app on this device (${url.protocol})`
}
