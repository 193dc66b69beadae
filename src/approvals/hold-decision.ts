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
  /** A probable duplicate no entry can hold: refused as SPEC §16 says. */
  | { kind: 'refuse' }

const PASS: HoldDecision = { kind: 'pass' }
const REFUSE: HoldDecision = { kind: 'refuse' }

/**
 * `duplicate`: the request is a probable duplicate (SPEC §16), held whatever its amount when an entry has approveAbove
 * for its currency; `refuse` when none has (the duplicate check judged by another reading of the currency).
 */
export function decideHold (
  limits: readonly AmountLimit[],
  amounts: readonly ReadAmount[],
  duplicate = false,
): HoldDecision {
  for (const read of amounts) {
    const threshold = limits[read.entry]?.approveAbove.get(read.currency)
    if (threshold !== undefined && (duplicate || read.units > limitUnits(threshold))) return { kind: 'hold', amount: read.amount, currency: read.currency }
  }
  return duplicate ? REFUSE : PASS
}
