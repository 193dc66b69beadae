/**
 * A person's decision (SPEC §11), the same from HTTP and the CLI: final, atomic in the store, and,
 * for an approval, sealed with the MAC the forwarder checks. What follows a decision (the forward,
 * giving amounts back) is the running sidecar's worker's, so a CLI decision is acted on the same way.
 */
import { ApprovalAlreadyDecidedError, ApprovalNotFoundError } from '../errors.js'
import { approvalMac, type MacKey } from './approval-mac.js'
import type { ApprovalRecord } from './approval-record.js'
import type { ApprovalStore } from './approval-store.js'

export interface DecisionRequest {
  status: 'approved' | 'rejected'
  by: string
  /** The approver's caller id, or `cli`. */
  byCaller: string
  reason: string | null
}

/** Throws ApprovalNotFoundError or ApprovalAlreadyDecidedError (also on an expired approval). */
export async function decideApproval (store: ApprovalStore, macKey: MacKey, id: string, request: DecisionRequest, nowMs: number): Promise<ApprovalRecord> {
  const current = await store.get(id)
  if (current === null) throw new ApprovalNotFoundError()
  const decided = { ...current, decidedBy: request.by, decidedByCaller: request.byCaller, decidedAtMs: nowMs }
  const mac = request.status === 'approved' ? approvalMac(macKey, decided) : null
  const outcome = await store.decide(id, { status: request.status, by: request.by, byCaller: request.byCaller, reason: request.reason, atMs: nowMs, mac }, nowMs)
  if (outcome.kind === 'missing') throw new ApprovalNotFoundError()
  if (outcome.kind === 'already') throw new ApprovalAlreadyDecidedError(outcome.approval.status)
  return outcome.approval
}
