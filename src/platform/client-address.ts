import { BlockList, isIP } from 'node:net'

/**
 * The client address of a request (CONTRACT §7, §25): the socket's peer, unless that peer is a
 * trusted proxy (TRUSTED_PROXIES), in which case the proxy's forwarding header names it. The
 * header is read from the right, the side the nearest proxy writes: the first address that is
 * not itself a trusted proxy is the client. Anything to its left was written by whoever sent
 * the request and could be forged, so it is never read.
 */

/** Which header the trusted proxies write: `X-Forwarded-For` (Caddy, nginx, Traefik, HAProxy, cloud balancers) or RFC 7239 `Forwarded`. */
export type ForwardedHeader = 'x-forwarded-for' | 'forwarded'

/** A TRUSTED_PROXIES entry that is not an address or a CIDR block; the message says which. */
export class ProxyListError extends Error {}

/** `::ffff:10.0.0.1` (an IPv4 client on a dual-stack socket) is `10.0.0.1`. */
function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address
}

/**
 * One spelling per IPv6 address (`2001:DB8:0::1` is `2001:db8::1`), as a bucket key must be; null
 * for one that has no canonical form (a zone index).
 */
function canonicalV6(address: string): string | null {
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1)
  } catch {
    return null
  }
}

export class TrustedProxies {
  private readonly list = new BlockList()

  /** `entries`: addresses and CIDR blocks, IPv4 or IPv6 (`127.0.0.1`, `::1`, `10.0.0.0/8`, `fd00::/8`). */
  constructor(
    readonly entries: readonly string[],
    readonly header: ForwardedHeader = 'x-forwarded-for',
  ) {
    for (const entry of entries) {
      const [address = '', bits, extra] = entry.split('/')
      const family = isIP(address)
      const prefix = bits === undefined ? undefined : /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN
      if (family === 0 || extra !== undefined || (prefix !== undefined && !(prefix <= (family === 4 ? 32 : 128)))) {
        throw new ProxyListError(`"${entry}" is not an IP address or a CIDR block (e.g. 127.0.0.1, ::1, 10.0.0.0/8, fd00::/8)`)
      }
      const type = family === 4 ? 'ipv4' : 'ipv6'
      if (prefix === undefined) this.list.addAddress(address, type)
      else this.list.addSubnet(address, prefix, type)
    }
  }

  trusts(address: string): boolean {
    const family = isIP(address)
    return family !== 0 && this.list.check(address, family === 4 ? 'ipv4' : 'ipv6')
  }

  /** The client behind `peer`: `peer` itself unless it is trusted, else the right-most untrusted hop of the header. */
  clientOf(peer: string, headers: Headers): string {
    let client = plain(peer)
    if (!this.trusts(client)) return client
    const text = headers.get(this.header)
    if (text === null) return client
    const hops = this.header === 'forwarded' ? forwardedFor(text) : text.split(',')
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = nodeAddress(hops[i] as string)
      // `unknown`, an obfuscated name, garbage: the nearest hop that is known stands for the client,
      // so such callers share that hop's bucket rather than choose one of their own.
      if (hop === null) return client
      client = hop
      if (!this.trusts(hop)) return hop
    }
    return client
  }
}

/** An address as a forwarding header writes it (`1.2.3.4`, `1.2.3.4:80`, `[2001:db8::1]:443`, `"[::1]"`, `2001:db8::1`), or null. */
function nodeAddress(raw: string): string | null {
  let text = raw.trim()
  if (text.startsWith('"') && text.endsWith('"') && text.length >= 2) text = text.slice(1, -1)
  if (text.startsWith('[')) {
    const end = text.indexOf(']')
    if (end === -1) return null
    const rest = text.slice(end + 1)
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return null
    text = text.slice(1, end)
  } else if (/^[\d.]+:\d{1,5}$/.test(text)) {
    text = text.slice(0, text.lastIndexOf(':'))
  }
  const family = isIP(text)
  if (family === 0) return null
  const mapped = plain(text.toLowerCase())
  return family === 4 || mapped !== text.toLowerCase() ? mapped : canonicalV6(text)
}

/** The `for=` values of an RFC 7239 `Forwarded` header, one per element, in order (`''` for an element without one). */
function forwardedFor(text: string): string[] {
  const hops: string[] = []
  let element = ''
  let quoted = false
  const finish = () => {
    const pair = element
      .split(';')
      .map((part) => part.trim())
      .find((part) => part.slice(0, 4).toLowerCase() === 'for=')
    hops.push(pair === undefined ? '' : pair.slice(4))
    element = ''
  }
  for (const char of text) {
    if (char === '"') quoted = !quoted
    if (char === ',' && !quoted) finish()
    else element += char
  }
  finish()
  return hops
}
