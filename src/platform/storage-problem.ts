import { statfsSync } from 'node:fs'
import { storageFailure } from '../db/failures.ts'
import { TenantUnavailableError } from '../db/tenant/registry.ts'
import type { Tenant } from '../db/tenant/tenant.ts'
import type { Platform, RequestState } from './context.ts'
import { ApiError, type ErrorCode } from './errors.ts'

/** Whether an error is the storage's (a full disk, a file that cannot be used), not a bug. */
const isStorageError = (error: unknown): boolean => error instanceof TenantUnavailableError || storageFailure(error) !== null

/**
 * Any error that is not an `ApiError`, as the client should see it: a storage problem (503 or
 * 507), or else `internal_error`, logged with its stack so the request id leads to it.
 */
export function unexpectedProblem(platform: Platform, error: unknown, state: RequestState, requestId: string): { code: ErrorCode; detail: string } {
  if (isStorageError(error)) return storageProblem(platform, error, state, requestId)
  platform.log(`[${requestId}] internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  return { code: 'internal_error', detail: `Something went wrong on our side; quote request id ${requestId} when reporting it` }
}

/**
 * A storage error as the client should see it (CONTRACT §6): a full disk is 507 (SQLite rolled
 * the write back), a file that cannot be used is 503 for its owner only. A damaged owner file
 * is closed, so the next request opens and checks it afresh; the log names the file.
 */
function storageProblem(platform: Platform, error: unknown, state: RequestState, requestId: string): { code: ErrorCode; detail: string } {
  const ownerId = state.auth?.subject.id
  if (storageFailure(error) === 'full') return spaceProblem(platform, ownerId)
  if (error instanceof TenantUnavailableError) {
    platform.log(`[${requestId}] ${error.message}`)
  } else if (ownerId) {
    platform.tenants.evict(ownerId)
    platform.log(`[${requestId}] storage error for owner ${ownerId} (${platform.tenants.pathFor(ownerId)}): ${String(error)}`)
  } else {
    platform.log(`[${requestId}] storage error: ${String(error)}`)
  }
  return { code: 'storage_unavailable', detail: `Your data cannot be read or written right now; quote request id ${requestId} to the operator` }
}

/** How often the operator is told again about the same shortage (a full disk answers every write with 507). */
const ALARM_EVERY_MS = 5 * 60_000
const lastAlarm = new WeakMap<Platform, Map<string, number>>()

/** Logs `message` under `topic` unless the same topic was logged within ALARM_EVERY_MS. */
function alarm(platform: Platform, topic: string, message: string): void {
  const topics = lastAlarm.get(platform) ?? new Map<string, number>()
  lastAlarm.set(platform, topics)
  const now = Date.now()
  if (now - (topics.get(topic) ?? -Infinity) < ALARM_EVERY_MS) return
  topics.set(topic, now)
  platform.log(message)
}

const freeBytes = (path: string): number => {
  try {
    const stats = statfsSync(path)
    return Number(stats.bavail) * Number(stats.bsize)
  } catch {
    return 0
  }
}

const mib = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MiB`

/** 507 for an owner whose data fills its quota (CONTRACT §19); the operator is told once in a while. */
export function quotaExceeded(platform: Platform, tenant: Tenant): ApiError {
  const quota = mib(tenant.limits.quotaBytes)
  alarm(
    platform,
    `quota ${tenant.ownerId}`,
    `owner ${tenant.ownerId} reached its storage quota (${quota}, OWNER_QUOTA_MB): its writes get 507 until it deletes data or the quota is raised`,
  )
  return new ApiError(
    'insufficient_storage',
    `This owner's storage quota (${quota}) is used up; nothing was written. Delete data you no longer need, or ask the operator to raise the quota.`,
  )
}

/**
 * SQLITE_FULL: the write was rolled back, nothing changed. Either the owner's file reached its
 * quota (CONTRACT §19: only that owner is refused) or the filesystem is full. For the latter
 * pfin first gives back what it holds beyond the data (every open database's write-ahead log,
 * folded into its file), then tells the operator how much is free.
 */
function spaceProblem(platform: Platform, ownerId: string | undefined): { code: ErrorCode; detail: string } {
  const dataDir = platform.config.dataDir
  const tenant = ownerId ? platform.tenants.peek(ownerId) : undefined
  if (tenant && tenant.quotaHeadroomBytes() < freeBytes(dataDir)) {
    const { code, detail } = quotaExceeded(platform, tenant)
    return { code, detail }
  }
  platform.tenants.foldAllLogs()
  try {
    platform.control.foldLog()
  } catch {
    // The control database's log folds at its next checkpoint.
  }
  alarm(
    platform,
    'disk',
    `disk full: the filesystem holding ${dataDir} has ${mib(freeBytes(dataDir))} free after pfin folded its write-ahead logs back into the databases; writes get 507 until space is freed there (a write needs about 100 KiB, a 500-item batch a few MiB)`,
  )
  return { code: 'insufficient_storage', detail: 'The server has no storage space left; nothing was written. Try again later.' }
}
