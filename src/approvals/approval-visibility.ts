/**
 * Who sees which approval (SPEC §11), in one place for the HTTP routes and the MCP tools (SPEC §13):
 * a caller sees its own approvals, an approver sees every one; another's approval does not exist
 * for it. Listing over HTTP is for approvers only (the route says so); an agent lists its own
 * through MCP, by these same rules.
 */
import type { CallerSpec } from '../callers/callers-file.js'
import type { ApprovalRecord } from './approval-record.js'
import type { ApprovalStore } from './approval-store.js'
import type { RecordVerifier } from './record-verifier.js'
import type { ApprovalStatus, ApprovalView } from '../objects/approval-object.js'

const ID = /^apr_[A-Za-z0-9_-]{1,64}$/

/** The approval when `caller` may see it; null when there is none or it is another caller's. */
export async function visibleApproval (
  store: ApprovalStore,
  caller: CallerSpec,
  id: string,
): Promise<ApprovalRecord | null> {
  const approval = ID.test(id) ? await store.get(id) : null
  return approval !== null && (caller.approver || approval.caller === caller.id) ? approval : null
}

/**
 * What `caller` may see, as shown (a pending approval past its time is expired; one whose seals do
 * not verify is rejected), optionally of one status.
 */
export async function visibleApprovals (
  store: ApprovalStore,
  verifier: RecordVerifier,
  caller: CallerSpec,
  status: ApprovalStatus | undefined,
  nowMs: number,
): Promise<ApprovalView[]> {
  return (await store.list())
    .filter((a) => caller.approver || a.caller === caller.id)
    .map((a) => verifier.view(a, nowMs))
    .filter((a) => status === undefined || a.status === status)
}
