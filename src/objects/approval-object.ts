/**
 * SPEC §11's approval object, wherever it appears: the 202, GET /approvals, the CLI's --json, the
 * console, MCP's approval tools. The approvals make it (approvals/approval-view.ts); the console
 * and MCP show it, so it lives in a room of its own rather than in the approvals' folder.
 */
import type { ProbableDuplicate } from './probable-duplicate.js'

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const
export type ApprovalStatus = typeof APPROVAL_STATUSES[number]

export interface ApprovalView {
  id: string
  status: ApprovalStatus
  caller: string
  environment: string
  interface: string
  method: string
  path: string
  amount: string
  currency: string
  externalReference: string
  expiresAt: number
  request: string
  decidedBy?: string
  decidedByCaller?: string
  /** The decision's reason; while none was given, a probable duplicate's (SPEC §16). */
  reason?: string
  duplicateOf?: ProbableDuplicate
}
