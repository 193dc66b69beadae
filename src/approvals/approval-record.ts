/**
 * A held request as stored (SPEC §11): exactly what would be forwarded (method, path, query,
 * headers without the token, body bytes), the reference's §8 key and fingerprint, the amounts
 * reserved against the day's total, and the decision. `forward` is the forwarding's own state, so a
 * restart knows whether the provider's answer was outstanding (`sending`) when the process died;
 * `answered` also marks a rejected or expired record whose amounts were given back. Each of the
 * three steps (held, decided, forwarding stage) carries its seal (approval-seal.ts).
 */
import type { ApprovalStatus } from '../objects/approval-object.js'
import type { ProbableDuplicate } from '../objects/probable-duplicate.js'

export type ForwardState = 'none' | 'sending' | 'answered'

export interface HeldReservation { key: string, units: string }

export interface ApprovalRecord {
  id: string
  /** The §8 record key (a hash): a retry of the same request finds its approval by it. */
  key: string
  fingerprint: string
  status: ApprovalStatus
  caller: string
  environment: string
  interface: string
  method: string
  /** Canonical path below the interface base as sent, and the upstream base path before it. */
  path: string
  upstreamUrl: string
  query: string
  headers: Record<string, string | string[]>
  body: Buffer
  amount: string
  currency: string
  externalReference: string
  createdAtMs: number
  expiresAtMs: number
  reservations: HeldReservation[]
  /** SPEC §16: held as a probable duplicate of this earlier payment; absent otherwise. */
  duplicateOf?: ProbableDuplicate
  /**
   * SPEC §16: the id its payment takes once approved and sent, planned by the duplicate check when
   * it judged the request, so the payout held is the payment a re-plan is then matched with. Absent
   * when none was planned (records held before it, or no check).
   */
  paymentId?: string
  decidedBy: string | null
  decidedByCaller: string | null
  reason: string | null
  decidedAtMs: number | null
  forward: ForwardState
  /** Over what is sent and shown, made at the hold. */
  holdSeal: string
  /** Over the decision, chained to holdSeal; null while pending. */
  decisionSeal: string | null
  /** Over the forwarding stage, chained to decisionSeal; null while `none`. */
  forwardSeal: string | null
}

export interface Decision {
  status: 'approved' | 'rejected' | 'expired'
  by: string | null
  byCaller: string | null
  reason: string | null
  atMs: number
  /** sealDecision over this decision, chained to the record's holdSeal. */
  seal: string
}

/** The record once `decision` is taken on it: what both stores write. */
export function decidedRecord (current: ApprovalRecord, decision: Decision): ApprovalRecord {
  return {
    ...current,
    status: decision.status,
    decidedBy: decision.by,
    decidedByCaller: decision.byCaller,
    reason: decision.reason,
    decidedAtMs: decision.atMs,
    decisionSeal: decision.seal,
  }
}

export type DecideOutcome =
  | { kind: 'decided', approval: ApprovalRecord }
  | { kind: 'already', approval: ApprovalRecord }
  | { kind: 'missing' }
