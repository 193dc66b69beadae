/**
 * `approvals_total{caller,outcome}` and the `approvals_pending` gauge (SPEC §11), on the registry
 * ops/metrics.ts owns. Caller ids are bounded by the callers file, so safe as labels.
 */
import { Counter, Gauge, type Registry } from 'prom-client'
import { workerPasses, type PassOutcome } from '../ops/worker-passes.js'

export type ApprovalOutcome = 'held' | 'notified' | 'approved' | 'rejected' | 'expired' | 'forwarded' | 'answered' | 'resent' | 'failed_verification'

export interface ApprovalMetrics {
  step: (caller: string, outcome: ApprovalOutcome) => void
  pending: (count: number) => void
  /** A pass of the worker's loops ended (`worker_passes_total`): expiries and give-backs, or forwards. */
  pass: (loop: 'approvals' | 'approvals_forward', outcome: PassOutcome) => void
}

export function createApprovalMetrics (registry: Registry, prefix: string): ApprovalMetrics {
  const total = new Counter({
    name: `${prefix}approvals_total`,
    help: 'Approval steps by caller and outcome: held, notified, approved, rejected, expired, forwarded, answered, resent, failed_verification (a record whose seals do not verify)',
    labelNames: ['caller', 'outcome'],
    registers: [registry],
  })
  const pending = new Gauge({ name: `${prefix}approvals_pending`, help: 'Approvals waiting for a decision', registers: [registry] })
  const passes = { approvals: workerPasses(registry, prefix, 'approvals'), approvals_forward: workerPasses(registry, prefix, 'approvals_forward') }
  return {
    step: (caller, outcome) => { total.inc({ caller, outcome }) },
    pending: (count) => { pending.set(count) },
    pass: (loop, outcome) => { passes[loop](outcome) },
  }
}
