/**
 * Whether a request waits for a person (SPEC §11), as a pure function over the caller's
 * `amountLimits` and the held body: held when its amount is above an applicable entry's
 * `approveAbove` for its currency and within `perRequest`. The day's total is the amount step's
 * reservation, which runs first (a request over it is refused, never held), so the plugin carries
 * this out only for a request the amount step let through.
 */
import { judgeAmounts, limitUnits, toUnits, type AmountFacts } from '../callers/amount-limits.js'
import type { AmountLimit } from '../callers/callers-file.js'
import { readPointer } from '../json/strict-json.js'

export type HoldDecision =
  | { kind: 'pass' }
  /** `amount` is the plain decimal as written in the request. */
  | { kind: 'hold', amount: string, currency: string }

const PASS: HoldDecision = { kind: 'pass' }

export function decideHold (limits: readonly AmountLimit[], facts: AmountFacts): HoldDecision {
  const gated = limits.filter((limit) => limit.approveAbove.size > 0 && (limit.paths === null || limit.paths(facts.path)))
  if (gated.length === 0) return PASS
  // Refusals (unreadable, over perRequest, an unlisted currency) are the amount step's answer.
  if (judgeAmounts(limits, facts).kind !== 'within' || facts.body === null) return PASS
  const parsed = facts.body.read('text')
  if (!parsed.ok) return PASS
  for (const limit of gated) {
    const amount = readPointer(parsed.value, limit.amount)
    const currency = readPointer(parsed.value, limit.currency)
    if (amount.kind !== 'found' || currency.kind !== 'found' || typeof amount.value !== 'string' || typeof currency.value !== 'string') continue
    const threshold = limit.approveAbove.get(currency.value)
    const units = toUnits(amount.value, 'up')
    if (threshold !== undefined && units !== null && units > limitUnits(threshold)) return { kind: 'hold', amount: amount.value, currency: currency.value }
  }
  return PASS
}
