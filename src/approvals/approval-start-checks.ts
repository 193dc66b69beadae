/**
 * What a start with approvals needs (SPEC §11), judged once the callers file is read: the signing
 * and sealing secrets whenever a caller uses `approveAbove`, idempotency on (the approval is the reference's §8
 * record), and a warning for a caller that could approve what it is held for, which another
 * approver must then decide.
 */
import type { CallerSpec } from '../callers/callers-file.js'
import type { Config } from '../config/config.js'

export interface ApprovalStartCheck {
  /** Whether any caller uses approveAbove: the approvals are set up only then. */
  used: boolean
  problems: string[]
  warnings: string[]
}

export function checkApprovalStart (callers: readonly CallerSpec[], config: Pick<Config, 'approvals' | 'idempotency'>): ApprovalStartCheck {
  const held = callers.filter((c) => c.amountLimits.some((limit) => limit.approveAbove.size > 0))
  const problems: string[] = []
  const warnings: string[] = []
  if (held.length === 0) return { used: false, problems, warnings }
  if (config.approvals.signingSecret === null) problems.push('PROXY_APPROVAL_SIGNING_SECRET (or PROXY_APPROVAL_SIGNING_SECRET_FILE) is required when the callers file uses approveAbove: it signs approval notifications (payments-auth-proxy webhook-secrets prints one)')
  if (config.approvals.sealingSecret === null) problems.push('PROXY_APPROVAL_SEALING_SECRET (or PROXY_APPROVAL_SEALING_SECRET_FILE) is required when the callers file uses approveAbove: it seals held requests so that no one who can write the store can change what is sent (payments-auth-proxy webhook-secrets prints one)')
  if (!config.idempotency.enabled) problems.push('PROXY_IDEMPOTENCY=off cannot be used with approveAbove in the callers file: an approval is the reference\'s idempotency record')
  for (const caller of held.filter((c) => c.approver)) {
    warnings.push(`caller ${caller.id} is an approver and is limited by approveAbove: its own held requests need another approver`)
  }
  return { used: true, problems, warnings }
}

/** A reload may not add approveAbove to a sidecar that started without approvals: it would be forwarded, not held. */
export function approveAboveNeedsRestart (callers: readonly CallerSpec[]): string[] {
  return callers
    .filter((c) => c.amountLimits.some((limit) => limit.approveAbove.size > 0))
    .map((c) => `caller ${c.id}: approveAbove needs a restart (approvals were not set up when the sidecar started)`)
}
