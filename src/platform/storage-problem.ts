import { storageFailure } from '../db/failures.ts'
import { TenantUnavailableError } from '../db/tenant/registry.ts'
import type { Platform, RequestState } from './context.ts'
import type { ErrorCode } from './errors.ts'

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
  if (storageFailure(error) === 'full') {
    platform.log(`[${requestId}] disk full: ${String(error)}`)
    return { code: 'insufficient_storage', detail: 'The server has no storage space left; nothing was written. Try again later.' }
  }
  const ownerId = state.auth?.subject.id
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
