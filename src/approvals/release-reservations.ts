/**
 * Gives a held request's amounts back to the day's total (SPEC §11: on rejection or expiry; §7: on a
 * 4xx answer), once per approval and reservation, whichever replica or loop gets there first: each
 * giving-back is named after both, and the state store gives a name back only once. A failure
 * keeps the amount counted, the safe direction for a limit; the next look tries again.
 */
import type { Logger } from 'pino'
import type { StateStore } from '../state/state-store.js'
import type { ApprovalRecord } from './approval-record.js'

export function releaseName (approvalId: string, reservationKey: string): string {
  return `apr:${approvalId}:${reservationKey}`
}

/** Resolves true when every amount was given back (or had been before). */
export async function releaseReservations (state: StateStore, approval: ApprovalRecord, log: Pick<Logger, 'warn'>): Promise<boolean> {
  let all = true
  for (const r of approval.reservations) {
    try {
      await state.release(r.key, BigInt(r.units), releaseName(approval.id, r.key))
    } catch (err) {
      all = false
      log.warn({ approval: approval.id, caller: approval.caller, err }, 'day total could not be given back; trying again at the next look')
    }
  }
  return all
}
