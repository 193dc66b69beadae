/**
 * Approvals' share of the proxy (SPEC §11), loaded only with a callers file: null unless a caller
 * uses approveAbove. Its two steps sit around the amount step (a held request's retry costs no
 * amount; a new one is held once reserved); its routes and worker come once the proxy's parts
 * exist; what a person decides with in the console is shared as `approvals` (approval-desk.ts),
 * and MCP is offered the look-ups (approval-tools.ts).
 */
import type { CallersHolder } from '../callers/callers-holder.js'
import type { ProxyContext, ProxyPart } from '../feature/feature.js'
import { offerTools } from '../feature/feature-tools.js'
import { inFlightTtlMs } from '../idempotency/idempotency-plugin.js'
import { METRIC_PREFIX } from '../ops/metrics.js'
import { createApprovalDesk, type ApprovalDesk } from './approval-desk.js'
import { approvalTools } from './approval-tools.js'
import type { ApprovalWorker } from './approval-worker.js'
import { approvalsInUse, prepareApprovals, registerApprovals } from './approvals-setup.js'

declare module '../feature/feature.js' {
  interface SharedParts { approvals: ApprovalDesk }
}

export async function approvalsPart (context: ProxyContext & { callers: CallersHolder }): Promise<ProxyPart | null> {
  const { config, log, clock, callers, shared } = context
  const prepared = await prepareApprovals(config, callers.current(), {
    log,
    clock,
    registry: context.registry,
    storage: context.storage,
  })
  if (prepared === null) return null
  // Loaded only when a caller uses approveAbove.
  const [{ createApprovalMetrics }, { approvalRetries, approvalHolds }] = await Promise.all([import('./approval-metrics.js'), import('./approvals-plugin.js')])
  const inUse = approvalsInUse(prepared, createApprovalMetrics(context.registry, METRIC_PREFIX), clock, log)
  let worker: ApprovalWorker | null = null
  shared.approvals = createApprovalDesk(inUse, () => { worker?.nudge() })
  offerTools(shared, approvalTools(inUse))
  return {
    steps: ({ store }) => {
      const options = {
        store: inUse.store,
        state: store,
        clock,
        ttlMs: inUse.ttlMs,
        keyPointer: config.idempotency.keyPointer,
        metrics: inUse.metrics,
        notifier: inUse.notifier,
        marks: inUse.marks,
        retentionMs: inUse.retentionMs,
        verifier: inUse.verifier,
      }
      return [
        { name: 'retry', register: async (app) => { await app.register(approvalRetries, options) } },
        { name: 'hold', register: async (app) => { await app.register(approvalHolds, options) } },
      ]
    },
    async register (app, parts) {
      worker = await registerApprovals(app, inUse, {
        config,
        callers: callers.current,
        access: parts.access,
        state: parts.store,
        sources: parts.sources,
        dispatcher: parts.dispatcher,
        log,
        inFlightTtlMs: inFlightTtlMs(config),
        recordTtlMs: config.idempotency.ttlS * 1000,
        follow: shared.payments?.approvedSends ?? null,
      })
    },
    start: () => { worker?.start() },
    async close () {
      await worker?.close()
      await inUse.store.close()
    },
  }
}
