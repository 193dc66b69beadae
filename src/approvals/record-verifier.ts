/**
 * Where every reading of an approval record meets its seals (SPEC §11 "Sealed records"): the loop
 * before it expires, settles or forwards, the proxy before it answers a retry, the routes and the
 * commands before they show one. A record whose chain does not verify is never sent and never shown
 * as pending: it is treated as rejected with the reason `record failed verification`, logged at
 * `error` once per record and process, and counted. Its reservation is not given back: the amounts
 * and keys it names are as untrusted as the rest of it.
 */
import type { Logger } from 'pino'
import type { ApprovalMetrics } from './approval-metrics.js'
import type { ApprovalRecord } from './approval-record.js'
import { sealFailure, type SealKey } from './approval-seal.js'
import { type ApprovalView } from '../objects/approval-object.js'
import { approvalView, failedApprovalView } from './approval-view.js'

export interface RecordVerifier {
  readonly key: SealKey
  /** True when the record's seals verify; otherwise logs and counts it (once) and returns false. */
  verified: (record: ApprovalRecord) => boolean
  /** The approval object a person or agent is shown: the failed one as rejected. */
  view: (record: ApprovalRecord, nowMs: number) => ApprovalView
}

export function createRecordVerifier (key: SealKey, log: Logger, metrics: Pick<ApprovalMetrics, 'step'> | null): RecordVerifier {
  // Logged once per record and process, not once per look.
  const reported = new Set<string>()
  const verified = (record: ApprovalRecord): boolean => {
    const failure = sealFailure(key, record)
    if (failure === null) return true
    if (!reported.has(record.id)) {
      reported.add(record.id)
      log.error({ approval: record.id, caller: record.caller, failed: failure }, 'approval record failed verification: never sent, treated as rejected (was the store written by hand, or sealed with another PROXY_APPROVAL_SEALING_SECRET?)')
      metrics?.step(record.caller, 'failed_verification')
    }
    return false
  }
  return {
    key,
    verified,
    view: (record, nowMs) => verified(record) ? approvalView(record, nowMs) : failedApprovalView(record, nowMs),
  }
}
