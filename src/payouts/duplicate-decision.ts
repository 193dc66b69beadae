/**
 * SPEC §16's decisions as pure functions over data: whether a caller's payout is judged at all,
 * which earlier payout it probably repeats, and whether a person or a refusal answers it. The
 * duplicates step (duplicates-plugin.ts) reads the facts and carries the decision out.
 */
import type { AmountLimit, CallerSpec } from '../callers/callers-file.js'
import type { ProbableDuplicate } from '../objects/probable-duplicate.js'
import type { CanonicalPath } from '../routing/canonical-path.js'
import type { MatchEntry } from './match-store.js'

/** What the payments know of an earlier payout's id; null when they hold no payment by it. */
export interface KnownPayment { state: string, externalReference: string, createdAt: number }

export interface Candidate { entry: MatchEntry, payment: KnownPayment | null }

/** A caller (or an entry that judges the request) with `duplicates: allow` is never judged. */
export function isJudged (caller: CallerSpec | null, applicable: readonly AmountLimit[]): boolean {
  return caller?.duplicatesAllowed !== true && !applicable.some((limit) => limit.duplicatesAllowed)
}

/**
 * The newest earlier payout, under another reference, that is not known to have failed: a payment in
 * any other state, or one still on its way to the payments' store (planned, not yet stored, within
 * `inFlightMs`). One planned longer ago with no payment was never sent (refused, held, dropped).
 */
export function probableDuplicate (
  reference: string,
  candidates: readonly Candidate[],
  nowMs: number,
  inFlightMs: number,
): ProbableDuplicate | null {
  for (const { entry, payment } of candidates) {
    if (entry.reference === reference) continue
    if (payment === null) {
      if (nowMs - entry.atMs >= inFlightMs) continue
      return { id: entry.id, externalReference: entry.reference, state: 'sending', createdAt: seconds(entry.atMs) }
    }
    if (payment.state === 'failed') continue
    const { externalReference, state, createdAt } = payment
    return { id: entry.id, externalReference, state, createdAt }
  }
  return null
}

function seconds (ms: number): number {
  return Math.floor(ms / 1000)
}

export type DuplicateAnswer = 'hold' | 'refuse'

/** Held for a person when approvals are on and an entry judging the request has approveAbove for its currency. */
export function duplicateAnswer (
  applicable: readonly AmountLimit[],
  currency: string,
  approvalsOn: boolean,
): DuplicateAnswer {
  return approvalsOn && applicable.some((limit) => limit.approveAbove.has(currency)) ? 'hold' : 'refuse'
}

/** The entries that judge a request on this folded path (SPEC §7: an entry without paths judges every one). */
export function applicableLimits (caller: CallerSpec | null, folded: CanonicalPath): AmountLimit[] {
  return caller === null ? [] : caller.amountLimits.filter((limit) => limit.paths === null || limit.paths(folded))
}
