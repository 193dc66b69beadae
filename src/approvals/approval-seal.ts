/**
 * Sealed approval records (SPEC §11): write access to the store is not the power to pay.
 *
 * A record is sealed when the request is held, over everything that decides what is sent and what
 * the person is shown: the environment, the interface and the upstream URL (which token goes
 * where), the method, path, query, headers and body bytes (what is sent), the amount, currency,
 * caller and reference (what the person reads), the §8 key and fingerprint (which retry it
 * answers), the reservations (what is given back) and the times. Every later state carries its own
 * seal chained to the one before: the decision (status, who, why, when) to the hold's seal, and
 * each forwarding stage to the decision's. A record whose chain does not verify is never sent and
 * never shown as pending.
 *
 * The key is derived from PROXY_APPROVAL_SEALING_SECRET, which no notification receiver holds
 * (notifications are signed with PROXY_APPROVAL_SIGNING_SECRET). A seal is an HMAC-SHA256 over a
 * JSON array of the covered values in a fixed order, each stage's array starting with its label,
 * so no value of one stage can be read as another's.
 *
 * What a seal cannot do: restore-proofing. Someone who can write the store can put back a state the
 * record really had (an approved record from before it was forwarded); that sends the same request
 * again, with the same reference, which §8's record and the provider's own idempotency refuse.
 */
import { deriveSealKey as deriveKey, sameSeal, seal as mac, type SealKey } from '../sealing/seal-mac.js'
import type { ApprovalRecord, ForwardState } from './approval-record.js'

const LABEL = 'payments-auth-proxy approval seal v2'

export type { SealKey }

export function deriveSealKey (sealingSecret: string): SealKey {
  return deriveKey(sealingSecret, LABEL)
}

type HoldCovered = Pick<ApprovalRecord,
  'id' | 'key' | 'fingerprint' | 'caller' | 'environment' | 'interface' | 'upstreamUrl' | 'method' | 'path' | 'query' | 'headers' | 'body' |
  'amount' | 'currency' | 'externalReference' | 'createdAtMs' | 'expiresAtMs' | 'reservations' | 'duplicateOf' | 'paymentId'>

export interface SealedDecision {
  status: 'approved' | 'rejected' | 'expired'
  by: string | null
  byCaller: string | null
  reason: string | null
  atMs: number
}

/** Header names in order, so the seal does not depend on how a store serialised the object. */
function headerList (headers: ApprovalRecord['headers']): Array<[string, string | string[]]> {
  return Object.keys(headers).sort().map((name) => [name, headers[name] ?? ''])
}

export function sealHold (key: SealKey, r: HoldCovered): string {
  const covered: unknown[] = [
    'hold', r.id, r.key, r.fingerprint, r.caller, r.environment, r.interface, r.upstreamUrl, r.method, r.path, r.query,
    headerList(r.headers), r.body.toString('base64'), r.amount, r.currency, r.externalReference, r.createdAtMs, r.expiresAtMs,
    r.reservations.map((reservation) => [reservation.key, reservation.units]),
  ]
  // Only when present, so records held before SPEC §16 verify as they did; removing it from one that had it fails.
  const d = r.duplicateOf
  if (d !== undefined) covered.push(['duplicateOf', d.id, d.externalReference, d.state, d.createdAt])
  if (r.paymentId !== undefined) covered.push(['paymentId', r.paymentId])
  return mac(key, covered)
}

export function sealDecision (key: SealKey, holdSeal: string, d: SealedDecision): string {
  return mac(key, ['decision', holdSeal, d.status, d.by, d.byCaller, d.reason, d.atMs])
}

export function sealStage (key: SealKey, decisionSeal: string, stage: ForwardState): string {
  return mac(key, ['stage', decisionSeal, stage])
}

/**
 * Null when the record's whole chain verifies for the state it is in; else which link failed (for
 * the log). A stage other than `none` needs a decision; `sending` only follows an approval.
 */
export function sealFailure (key: SealKey, r: ApprovalRecord): string | null {
  // A record held before seals existed, or one missing its fields, has none to check.
  if (typeof r.holdSeal !== 'string' || !Array.isArray(r.reservations) || typeof r.headers !== 'object' || r.headers === null) return 'hold seal missing'
  if (!sameSeal(sealHold(key, r), r.holdSeal)) return 'hold seal'
  if (r.status === 'pending') return r.forward === 'none' && r.decisionSeal === null && r.forwardSeal === null ? null : 'stage of a pending record'
  const decision = {
    status: r.status,
    by: r.decidedBy,
    byCaller: r.decidedByCaller,
    reason: r.reason,
    atMs: r.decidedAtMs ?? Number.NaN,
  }
  const decisionSeal = sealDecision(key, r.holdSeal, decision)
  if (!sameSeal(decisionSeal, r.decisionSeal)) return 'decision seal'
  if (r.forward === 'none') return r.forwardSeal === null ? null : 'stage seal of an unforwarded record'
  if (r.forward === 'sending' && r.status !== 'approved') return 'stage of an unapproved record'
  return sameSeal(sealStage(key, decisionSeal, r.forward), r.forwardSeal) ? null : 'stage seal'
}
