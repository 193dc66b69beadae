/**
 * SPEC §16's limits an agent can read, as a pure function over its caller's `amountLimits` and the
 * day's figures: one line per entry and currency named in any of its maps. A day's total (§7) holds
 * what was forwarded and not given back and what pending approvals reserve; the approvals say how
 * much of it they reserve. Only a currency with `perDay` has a total: without one, nothing is counted.
 */
import { dayTotalKey, DAY_MS, fromUnits, limitUnits, utcDay } from '../callers/amount-limits.js'
import type { CallerSpec } from '../callers/callers-file.js'

export interface LimitLine {
  paths: readonly string[]
  currency: string
  perRequest: string | null
  perDay: string | null
  approveAbove: string | null
  usedToday: string
  heldForApproval: string
  leftToday: string | null
  /** The next UTC midnight, Unix seconds. */
  resetsAt: number
}

/** The state store's keys of the caller's day totals today: what `limitsToday` is given the figures of. */
export function dayKeysToday (caller: CallerSpec, nowMs: number): string[] {
  const day = utcDay(nowMs)
  return caller.amountLimits.flatMap((limit, entry) =>
    [...limit.perDay.keys()].map((currency) => dayTotalKey(caller.id, entry, currency, day)))
}

/**
 * `totals`: each day key's total (what dayKeysToday named); `held`: what pending approvals reserve, by day key
 * (keys of other days are not today's and not asked for).
 */
export function limitsToday (
  caller: CallerSpec,
  nowMs: number,
  totals: ReadonlyMap<string, bigint>,
  held: ReadonlyMap<string, bigint>,
): LimitLine[] {
  const day = utcDay(nowMs)
  const resetsAt = ((day + 1) * DAY_MS) / 1000
  return caller.amountLimits.flatMap((limit, entry) => {
    const currencies = new Set([...limit.perRequest.keys(), ...limit.perDay.keys(), ...limit.approveAbove.keys()])
    return [...currencies].map((currency): LimitLine => {
      const key = dayTotalKey(caller.id, entry, currency, day)
      const perDay = limit.perDay.get(currency) ?? null
      const total = perDay === null ? 0n : totals.get(key) ?? 0n
      const reserved = perDay === null ? 0n : held.get(key) ?? 0n
      const used = total > reserved ? total - reserved : 0n
      const left = perDay === null ? null : limitUnits(perDay) - total
      return {
        paths: limit.pathGlobs ?? ['/**'],
        currency,
        perRequest: limit.perRequest.get(currency) ?? null,
        perDay,
        approveAbove: limit.approveAbove.get(currency) ?? null,
        usedToday: fromUnits(used),
        heldForApproval: fromUnits(reserved < total ? reserved : total),
        leftToday: left === null ? null : fromUnits(left > 0n ? left : 0n),
        resetsAt,
      }
    })
  })
}
