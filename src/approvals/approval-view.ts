/**
 * The approval object wherever it appears (SPEC §11: the 202, GET /approvals, the CLI's --json):
 * what a person needs to decide, never the stored headers or the MAC. `request` is the body as text,
 * cut at 16 KiB and marked, so the person sees the recipient, not just the amount.
 */
import type { ApprovalView } from '../objects/approval-object.js'
import { duplicateReason } from '../objects/probable-duplicate.js'
import type { ApprovalRecord } from './approval-record.js'

export const MAX_REQUEST_TEXT_BYTES = 16 * 1024
const CUT_MARK = '…[cut]'
/** SPEC §11: the reason a record whose seals do not verify is shown with, and refused with. */
export const FAILED_VERIFICATION_REASON = 'record failed verification'


/** `nowMs`: a pending approval past its time shows as expired before the sweeper has written it. */
export function approvalView (a: ApprovalRecord, nowMs: number): ApprovalView {
  const status = a.status === 'pending' && a.expiresAtMs <= nowMs ? 'expired' : a.status
  const view: ApprovalView = {
    id: a.id,
    status,
    caller: a.caller,
    environment: a.environment,
    interface: a.interface,
    method: a.method,
    path: a.path,
    amount: a.amount,
    currency: a.currency,
    externalReference: a.externalReference,
    expiresAt: Math.floor(a.expiresAtMs / 1000),
    request: requestText(a.body),
  }
  if (a.decidedBy !== null) view.decidedBy = a.decidedBy
  if (a.decidedByCaller !== null) view.decidedByCaller = a.decidedByCaller
  if (a.duplicateOf !== undefined) {
    view.duplicateOf = a.duplicateOf
    view.reason = duplicateReason(a.duplicateOf)
  }
  if (a.reason !== null) view.reason = a.reason
  return view
}

function requestText (body: Buffer): string {
  if (body.length <= MAX_REQUEST_TEXT_BYTES) return body.toString('utf8')
  // Cut on a byte bound; a split UTF-8 sequence becomes one replacement character, then the mark.
  return `${body.subarray(0, MAX_REQUEST_TEXT_BYTES).toString('utf8')}${CUT_MARK}`
}

/** A record whose seals do not verify (record-verifier.ts): rejected, never pending, nobody's decision. */
export function failedApprovalView (a: ApprovalRecord, nowMs: number): ApprovalView {
  const view: ApprovalView = { ...approvalView(a, nowMs), status: 'rejected', reason: FAILED_VERIFICATION_REASON }
  delete view.decidedBy
  delete view.decidedByCaller
  return view
}
