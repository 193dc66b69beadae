/**
 * A rejection is answered only once its amount is back in the day's total (SPEC §11, round 5), so
 * that a request made after the answer is judged with it back. Who can give it back decides how:
 *
 * - the sidecar's HTTP route holds the state store: it gives the amount back itself, under the
 *   approval's own names (release-reservations.ts), before it answers;
 * - the CLI with Redis reaches the same day totals as every replica: it gives it back itself too;
 * - the CLI without Redis cannot: the totals live in the running sidecar's memory. Nor can the
 *   console, which is handed the approvals' desk (approval-desk.ts), not the state store.
 *   Both wait for the record to say a worker gave it back (`forward` `answered`, written only once
 *   the amounts are back), up to GIVE_BACK_WAIT_MS.
 *
 * Whoever gets there first gives it back; the others' giving-back under the same name is nothing.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Config } from '../config/config.js'
import type { ApprovalRecord } from './approval-record.js'
import type { ApprovalStore } from './approval-store.js'

/** SPEC §11: how long the CLI waits for the running sidecar; the console waits as long for its own worker. */
export const GIVE_BACK_WAIT_MS = 5000
/** A worker writes the record within a few milliseconds of its nudged look. */
const GIVE_BACK_POLL_MS = 20

export type GiveBackBy = 'here' | 'sidecar'

/** Where the CLI's rejection is given back: here through Redis, or by the sidecar that holds the totals in memory. */
export function cliGivesBack (config: Pick<Config, 'state'>): GiveBackBy {
  return config.state.redisUrl === null ? 'sidecar' : 'here'
}

/** The worker writes `answered` on a rejected or expired record only after its amounts were given back. */
export function isGivenBack (record: ApprovalRecord | null): boolean {
  return record !== null && (record.status === 'rejected' || record.status === 'expired') && record.forward === 'answered'
}

/**
 * Resolves true once the record says its amounts are back, false when `timeoutMs` passed first. Real
 * time, not the Clock's: it is a wait a person sees. Its timer is ref'ed, so the CLI, with nothing else
 * open, stays up for it (the Clock's timers are unref'ed).
 */
export async function waitGivenBack (store: ApprovalStore, id: string, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    if (isGivenBack(await store.get(id))) return true
    if (performance.now() >= deadline) return false
    await sleep(GIVE_BACK_POLL_MS)
  }
}
