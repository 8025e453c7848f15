import { storageFailure } from '../db/failures.ts'
import { TenantUnavailableError } from '../db/tenant/registry.ts'
import type { Platform, RequestState } from './context.ts'
import type { ErrorCode } from './errors.ts'

/** Whether an error is the storage's (a full disk, a file that cannot be used), not a bug. */
export const isStorageError = (error: unknown): boolean => error instanceof TenantUnavailableError || storageFailure(error) !== null

/**
 * A storage error as the client should see it (CONTRACT §6): a full disk is 507 (SQLite rolled
 * the write back), a file that cannot be used is 503 for its owner only. A damaged owner file
 * is closed, so the next request opens and checks it afresh; the log names the file.
 */
export function storageProblem(platform: Platform, error: unknown, state: RequestState, requestId: string): { code: ErrorCode; detail: string } {
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
