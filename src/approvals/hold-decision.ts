/**
 * Whether a request waits for a person (SPEC §11), as a pure function over the caller's
 * `amountLimits` and the amounts the amount step read (its one reading of the body): held when an
 * amount is above its entry's `approveAbove` for its currency. The amount step runs first and
 * refuses what is unreadable, over `perRequest` or over the day's total, so only a request within
 * all of them is judged here, and never held when refused.
 */
import { limitUnits, type ReadAmount } from '../callers/amount-limits.js'
import type { AmountLimit } from '../callers/callers-file.js'

export type HoldDecision =
  | { kind: 'pass' }
  /** `amount` is the plain decimal as written in the request. */
  | { kind: 'hold', amount: string, currency: string }

const PASS: HoldDecision = { kind: 'pass' }

export function decideHold (limits: readonly AmountLimit[], amounts: readonly ReadAmount[]): HoldDecision {
  for (const read of amounts) {
    const threshold = limits[read.entry]?.approveAbove.get(read.currency)
    if (threshold !== undefined && read.units > limitUnits(threshold)) return { kind: 'hold', amount: read.amount, currency: read.currency }
  }
  return PASS
}
