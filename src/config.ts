import { resolve } from 'node:path'
import { DEFAULT_OWNER_LIMITS, type OwnerLimits } from './db/tenant/tenant.ts'
import { isCalendarDate } from './platform/validation.ts'
import { type ForwardedHeader, ProxyListError, TrustedProxies } from './platform/client-address.ts'
import { NODE_NAME } from './platform/cluster.ts'

/** Runtime settings, read once from the environment (CONTRACT §1). */
export interface Config {
  port: number
  host: string
  dataDir: string
  rateLimitPerMinute: number
  rateLimitPerDay: number
  anonRateLimitPerMinute: number
  anonRateLimitPerDay: number
  idempotencyTtlHours: number
  /** How many tenant databases stay open at once (least recently used are closed). */
  tenantCacheSize: number
  /** How long deleted transactions' tombstones stay in the change feed (days; 0 = purge at once). */
  tombstoneRetentionDays: number
  /** Browser origins allowed to call /mcp (requests without an Origin header are not browsers'). */
  mcpAllowedOrigins: string[]
  /** Proxies whose forwarding header names the client (CONTRACT §25): addresses and CIDR blocks; empty: the socket's peer is the client. */
  trustedProxies: string[]
  /** The header those proxies write. */
  trustedProxyHeader: ForwardedHeader
  /** Browser origins whose pages may call the API (CONTRACT §25); empty: no CORS headers at all. */
  corsAllowedOrigins: string[]
  /** Where scheduled backups go; null: no scheduled backups. */
  backupDir: string | null
  backupIntervalHours: number
  backupKeep: number
  /** What one owner may hold (CONTRACT §19): its file's size, and how many accounts, categories, payees and tags. */
  ownerLimits: OwnerLimits
  /**
   * The origin clients reach pfin at (`https://pfin.example.com`): the OAuth issuer, and where
   * sign-in links point (CONTRACT §28). Null: sign-in and OAuth are off.
   */
  publicUrl: string | null
  /**
   * This server as a node of a cluster (CONTRACT §31): its name, the directory file it reads,
   * where Litestream replicates its owners (null: no replication) and how often it looks and
   * ships (`CLUSTER_REPLICA_INTERVAL`, seconds, default 1). Null on a single server.
   */
  cluster: { node: string; directory: string; replica: string | null; replicaIntervalSeconds: number } | null
  /** Access log lines on stdout: json, pretty, or off (default: json unless stdout is a terminal). */
  logFormat: 'json' | 'pretty' | 'off'
  /** A fixed "today" for schedules (`PFIN_TODAY`, a test setting, CONTRACT §29); null: the UTC date. */
  today: string | null
}

export class ConfigError extends Error {}

function logFormatFrom(raw: string | undefined): Config['logFormat'] {
  const value = raw?.trim().toLowerCase()
  if (!value) return process.stdout.isTTY ? 'pretty' : 'json'
  if (value === 'json' || value === 'pretty' || value === 'off') return value
  throw new ConfigError(`LOG_FORMAT must be json, pretty or off, got "${raw}"`)
}

/** A comma list: items trimmed, empty items dropped. */
const listFrom = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)

function trustedProxiesFrom(raw: string | undefined): string[] {
  const entries = listFrom(raw)
  try {
    new TrustedProxies(entries)
  } catch (error) {
    if (error instanceof ProxyListError) throw new ConfigError(`TRUSTED_PROXIES: ${error.message}`)
    throw error
  }
  return entries
}

function proxyHeaderFrom(raw: string | undefined): ForwardedHeader {
  const value = raw?.trim().toLowerCase()
  if (!value) return 'x-forwarded-for'
  if (value === 'x-forwarded-for' || value === 'forwarded') return value
  throw new ConfigError(`TRUSTED_PROXY_HEADER must be x-forwarded-for or forwarded, got "${raw}"`)
}

/**
 * A browser origin as browsers send it in `Origin`: scheme, host and a port other than the
 * scheme's default, nothing else (`https://app.example.com`, `http://localhost:5173`). `*` allows
 * every origin. `null` (sandboxed frames, files) is refused: any page can make itself that origin.
 */
function corsOriginsFrom(raw: string | undefined): string[] {
  return listFrom(raw).map((entry) => {
    if (entry === '*') return entry
    let url: URL | undefined
    try {
      url = new URL(entry)
    } catch {}
    const web = url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:')
    if (!url || !web) {
      throw new ConfigError(`CORS_ALLOWED_ORIGINS: "${entry}" is not an origin such as https://app.example.com or http://localhost:5173 (or * for any)`)
    }
    if (url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
      throw new ConfigError(`CORS_ALLOWED_ORIGINS: "${entry}" is not an origin; write it as ${url.origin} (scheme, host and port only)`)
    }
    return url.origin
  })
}

function todayFrom(raw: string | undefined): string | null {
  const value = raw?.trim()
  if (!value) return null
  if (!isCalendarDate(value)) throw new ConfigError(`PFIN_TODAY must be a calendar date YYYY-MM-DD, got "${raw}"`)
  return value
}

function intFrom(env: Record<string, string | undefined>, name: string, fallback: number, min: number): number {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`)
  const value = Number(raw.trim())
  if (!Number.isSafeInteger(value) || value < min) throw new ConfigError(`${name} must be at least ${min}, got "${raw}"`)
  return value
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost'])

/**
 * `PUBLIC_URL`: an origin only (OAuth's well-known documents sit at the root of the issuer), over
 * https, or http to a loopback address (a password must not cross a network in the clear).
 */
function publicUrlFrom(raw: string | undefined): string | null {
  const text = raw?.trim()
  if (!text) return null
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new ConfigError(`PUBLIC_URL must be a URL such as https://pfin.example.com, got "${raw}"`)
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)))
    throw new ConfigError(`PUBLIC_URL must use https (http only for 127.0.0.1, [::1] or localhost), got "${raw}"`)
  if (url.username || url.password || url.search || url.hash || text.includes('#') || (url.pathname !== '/' && url.pathname !== ''))
    throw new ConfigError(`PUBLIC_URL must be an origin with no path, query or user (https://pfin.example.com), got "${raw}"`)
  return url.origin
}

/** CLUSTER_NODE, CLUSTER_DIRECTORY and CLUSTER_REPLICA: all or none of the first two. */
function clusterFrom(env: Record<string, string | undefined>): Config['cluster'] {
  const node = env.CLUSTER_NODE?.trim()
  const directory = env.CLUSTER_DIRECTORY?.trim()
  const replica = env.CLUSTER_REPLICA?.trim() || null
  if (!node && !directory) {
    if (replica) throw new ConfigError('CLUSTER_REPLICA needs CLUSTER_NODE and CLUSTER_DIRECTORY')
    return null
  }
  if (!node || !NODE_NAME.test(node))
    throw new ConfigError(`CLUSTER_NODE must be a node name such as node-a (lower-case letters, digits, -), got "${node ?? ''}"`)
  if (!directory) throw new ConfigError('CLUSTER_NODE needs CLUSTER_DIRECTORY, the directory file that `pfin cluster` writes')
  if (replica && !/^(file|s3):\/\/./.test(replica)) throw new ConfigError(`CLUSTER_REPLICA must be a file:// or s3:// URL, got "${replica}"`)
  const replicaIntervalSeconds = intFrom(env, 'CLUSTER_REPLICA_INTERVAL', 1, 1)
  return { node, directory: resolve(directory), replica: replica?.replace(/\/+$/, '') ?? null, replicaIntervalSeconds }
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const port = intFrom(env, 'PORT', 3000, 0)
  if (port > 65535) throw new ConfigError(`PORT must be between 0 and 65535, got "${env.PORT}"`)
  return {
    port,
    host: env.HOST?.trim() || '0.0.0.0',
    dataDir: resolve(env.DATA_DIR?.trim() || './data'),
    rateLimitPerMinute: intFrom(env, 'RATE_LIMIT_PER_MINUTE', 120, 1),
    rateLimitPerDay: intFrom(env, 'RATE_LIMIT_PER_DAY', 10000, 1),
    anonRateLimitPerMinute: intFrom(env, 'ANON_RATE_LIMIT_PER_MINUTE', 30, 1),
    anonRateLimitPerDay: intFrom(env, 'ANON_RATE_LIMIT_PER_DAY', 1000, 1),
    idempotencyTtlHours: intFrom(env, 'IDEMPOTENCY_TTL_HOURS', 24, 1),
    tenantCacheSize: intFrom(env, 'TENANT_CACHE_SIZE', 256, 1),
    tombstoneRetentionDays: intFrom(env, 'TOMBSTONE_RETENTION_DAYS', 400, 0),
    mcpAllowedOrigins: (env.MCP_ALLOWED_ORIGINS ?? '')
      .split(',')
      .map((origin) => origin.trim().replace(/\/+$/, ''))
      .filter(Boolean),
    trustedProxies: trustedProxiesFrom(env.TRUSTED_PROXIES),
    trustedProxyHeader: proxyHeaderFrom(env.TRUSTED_PROXY_HEADER),
    corsAllowedOrigins: corsOriginsFrom(env.CORS_ALLOWED_ORIGINS),
    backupDir: env.BACKUP_DIR?.trim() ? resolve(env.BACKUP_DIR.trim()) : null,
    backupIntervalHours: intFrom(env, 'BACKUP_INTERVAL_HOURS', 24, 1),
    backupKeep: intFrom(env, 'BACKUP_KEEP', 7, 1),
    logFormat: logFormatFrom(env.LOG_FORMAT),
    cluster: clusterFrom(env),
    publicUrl: publicUrlFrom(env.PUBLIC_URL),
    today: todayFrom(env.PFIN_TODAY),
    ownerLimits: {
      quotaBytes: intFrom(env, 'OWNER_QUOTA_MB', DEFAULT_OWNER_LIMITS.quotaBytes / 1_048_576, 1) * 1_048_576,
      accounts: intFrom(env, 'OWNER_MAX_ACCOUNTS', DEFAULT_OWNER_LIMITS.accounts, 1),
      categories: intFrom(env, 'OWNER_MAX_CATEGORIES', DEFAULT_OWNER_LIMITS.categories, 1),
      payees: intFrom(env, 'OWNER_MAX_PAYEES', DEFAULT_OWNER_LIMITS.payees, 1),
      tags: intFrom(env, 'OWNER_MAX_TAGS', DEFAULT_OWNER_LIMITS.tags, 1),
      rules: intFrom(env, 'OWNER_MAX_RULES', DEFAULT_OWNER_LIMITS.rules, 1),
    },
  }
}
