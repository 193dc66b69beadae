/**
 * A person's decision (SPEC §11), the same from HTTP, the CLI and the console: final, atomic in
 * the store, and sealed, chained to the seal the record got when it was held. What follows a
 * decision (the forward, giving amounts back) is the running sidecar's worker's, so a decision taken
 * in another process is acted on the same way.
 */
import { ApprovalAlreadyDecidedError, ApprovalNotFoundError } from '../errors.js'
import type { ApprovalRecord } from './approval-record.js'
import { sealDecision } from './approval-seal.js'
import type { ApprovalStore } from './approval-store.js'
import { FAILED_VERIFICATION_REASON } from './approval-view.js'
import type { RecordVerifier } from './record-verifier.js'

export interface DecisionRequest {
  status: 'approved' | 'rejected'
  by: string
  /** The approver's caller id, `cli` or `console`. */
  byCaller: string
  reason: string | null
}

/**
 * Throws ApprovalNotFoundError, or ApprovalAlreadyDecidedError (also on an expired approval, and
 * on one whose seals do not verify: it is treated as rejected, logged and counted by the verifier,
 * and nothing is written).
 */
export async function decideApproval (
  store: ApprovalStore,
  verifier: RecordVerifier,
  id: string,
  request: DecisionRequest,
  nowMs: number,
): Promise<ApprovalRecord> {
  const current = await store.get(id)
  if (current === null) throw new ApprovalNotFoundError()
  if (!verifier.verified(current)) throw new ApprovalAlreadyDecidedError(`rejected (${FAILED_VERIFICATION_REASON})`)
  const decision = {
    status: request.status,
    by: request.by,
    byCaller: request.byCaller,
    reason: request.reason,
    atMs: nowMs,
  }
  const outcome = await store.decide(
    id,
    { ...decision, seal: sealDecision(verifier.key, current.holdSeal, decision) },
    nowMs,
  )
  if (outcome.kind === 'missing') throw new ApprovalNotFoundError()
  if (outcome.kind === 'already') throw new ApprovalAlreadyDecidedError(outcome.approval.status)
  return outcome.approval
}
