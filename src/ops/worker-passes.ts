/**
 * `worker_passes_total{worker,outcome}`: each pass of one of the sidecar's background loops, that is
 * one look at its store for due work, counted when it ends: `done`, or `failed` when the store did
 * not answer. A loop whose count stops rising is stuck (a store call that never returns); one whose
 * `failed` rises cannot reach its store. One counter on the registry, shared by every loop.
 */
import { Counter, type Registry } from 'prom-client'
import type { PassOutcome } from '../loops/serial-passes.js'

export type { PassOutcome } from '../loops/serial-passes.js'

/**
 * The loops: the approvals' expiries and give-backs (`approvals`) and their forwards of approved
 * requests (`approvals_forward`), the payments' (`payments`), the inbox's deliveries (`webhooks`),
 * and each notification outbox's deliveries (`approval_notifications`, `payment_notifications`).
 */
export type WorkerName = 'approvals' | 'approvals_forward' | 'payments' | 'webhooks' | 'approval_notifications' | 'payment_notifications'
export type PassCounter = (outcome: PassOutcome) => void

/** `prefix` is the registry's metric name prefix (ops/metrics.ts). */
export function workerPasses (registry: Registry, prefix: string, worker: WorkerName): PassCounter {
  const name = `${prefix}worker_passes_total`
  const counter = registry.getSingleMetric(name) as Counter<'worker' | 'outcome'> | undefined ?? new Counter({
    name, help: 'Passes of the background loops (a look at the store for due work), by loop and outcome (done; failed: the store did not answer)', labelNames: ['worker', 'outcome'], registers: [registry],
  })
  for (const outcome of ['done', 'failed'] as const) counter.inc({ worker, outcome }, 0)
  return (outcome) => { counter.inc({ worker, outcome }) }
}
