import { createHmac, timingSafeEqual } from 'node:crypto'
import type { FeedState } from '../../db/tenant/change-log.ts'
import { ApiError } from '../../platform/errors.ts'

/**
 * Change-feed cursors (CONTRACT §15): `chg_` + base64url("<epoch>.<seq>.<mac>"), the MAC binding
 * them to this owner and file, so a cursor cannot be forged, moved to another owner, or used
 * after a restore started a new epoch.
 */

const PREFIX = 'chg_'

function mac(ownerId: string, state: FeedState, epoch: string, seq: number): string {
  return createHmac('sha256', state.secret).update(`${ownerId}.${epoch}.${seq}`).digest('base64url').slice(0, 22)
}

export function encodeFeedCursor(ownerId: string, state: FeedState, seq: number): string {
  return PREFIX + Buffer.from(`${state.epoch}.${seq}.${mac(ownerId, state, state.epoch, seq)}`).toString('base64url')
}

const notOurs = () => new ApiError('validation_failed', 'cursor: not a change-feed cursor issued to this owner; use a nextCursor from GET /v1/changes')

/** The seq a cursor stands at: 422 when it is not one of this owner's, 410 when it is too old to resume from. */
export function decodeFeedCursor(ownerId: string, state: FeedState, cursor: string): number {
  if (!cursor.startsWith(PREFIX)) throw notOurs()
  const parts = Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString('utf8').split('.')
  const [epoch, seqText, signature] = parts
  if (parts.length !== 3 || !epoch || !seqText || !signature || !/^(0|[1-9]\d{0,15})$/.test(seqText)) throw notOurs()
  const seq = Number(seqText)
  const expected = Buffer.from(mac(ownerId, state, epoch, seq))
  const given = Buffer.from(signature)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw notOurs()
  if (epoch !== state.epoch || seq < state.purgedSeq) {
    throw new ApiError(
      'cursor_expired',
      epoch !== state.epoch
        ? 'cursor: this feed was restored from a backup since the cursor was issued; resync: call without cursor'
        : 'cursor: deletions since this cursor are no longer kept; resync: call without cursor',
    )
  }
  return seq
}
