/**
 * Gives a held request's amounts back to the day's total (SPEC §11: on rejection or expiry; §7: on a
 * 4xx answer). A failure keeps the amount counted, the safe direction for a limit.
 */
import type { Logger } from 'pino'
import type { StateStore } from '../state/state-store.js'
import type { ApprovalRecord } from './approval-record.js'

export async function releaseReservations (state: StateStore, approval: ApprovalRecord, log: Logger): Promise<void> {
  for (const r of approval.reservations) {
    try {
      await state.release(r.key, BigInt(r.units))
    } catch (err) {
      log.warn({ approval: approval.id, caller: approval.caller, err }, 'day total could not be given back')
    }
  }
}
