/**
 * SPEC §16's `duplicateOf`: the earlier payment a re-planned payout probably repeats. The payouts
 * feature finds it; the approvals show it on a held request, the errors in a refusal, and the
 * console beside the held one, so it lives in a room of its own. A request carries the one its
 * duplicate check found, for the hold step after it.
 */
import type { FastifyRequest } from 'fastify'

export interface ProbableDuplicate {
  /** `pay_…` */
  id: string
  externalReference: string
  /** The earlier payment's state (SPEC §12) when it was judged: never `failed`. */
  state: string
  /** Unix seconds. */
  createdAt: number
}

const found = new WeakMap<FastifyRequest, ProbableDuplicate>()

export function markProbableDuplicate (request: FastifyRequest, duplicateOf: ProbableDuplicate): void {
  found.set(request, duplicateOf)
}

/** What the duplicate check found for this request; null when it found none, or did not judge it. */
export function probableDuplicateOf (request: FastifyRequest): ProbableDuplicate | null {
  return found.get(request) ?? null
}

/** The approval's reason while no decision gave one (SPEC §16). */
export function duplicateReason (duplicateOf: ProbableDuplicate): string {
  return `probable duplicate of ${duplicateOf.id}`
}
