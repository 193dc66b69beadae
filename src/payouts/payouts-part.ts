/**
 * Payouts' share of the proxy (SPEC §16): the `duplicates` step when payments are followed and the
 * window is not 0 (its match store beside the payments'), and always `GET /limits` with MCP's
 * `get_limits`. It reads what payments and approvals share: which requests are followed and what
 * became of a payment; whether a person can be asked, and what pending approvals reserve.
 */
import type { ProxyContext, ProxyPart } from '../feature/feature.js'
import { offerTools } from '../feature/feature-tools.js'
import { inFlightTtlMs } from '../idempotency/idempotency-plugin.js'
import { METRIC_PREFIX } from '../ops/metrics.js'
import { createDuplicateMetrics } from './duplicate-metrics.js'
import { duplicatesCheck } from './duplicates-plugin.js'
import { LIMIT_TOOLS } from './limit-tools.js'
import { limitsRoute } from './limits-route.js'
import type { MatchStore } from './match-store.js'
import { openMatchStore } from './open-match-store.js'

export async function payoutsPart (context: ProxyContext): Promise<ProxyPart> {
  const { config, log, clock, callers, shared } = context
  if (callers !== null) offerTools(shared, LIMIT_TOOLS)
  const duplicates = config.duplicates
  const payments = shared.payments
  let store: MatchStore | null = null
  if (duplicates !== null && payments !== undefined && config.payments !== null) {
    store = await openMatchStore(config.payments.storePath, context.storage, { log, clock })
  }
  const approvals = shared.approvals
  return {
    steps: (parts) => {
      if (store === null || duplicates === null || payments === undefined || config.payments === null) return []
      const options = {
        store,
        payments,
        pointers: {
          amount: config.payments.amountPointer,
          currency: config.payments.currencyPointer,
          recipients: duplicates.recipientPointers,
        },
        windowMs: duplicates.windowMs,
        inFlightMs: inFlightTtlMs(config),
        keyPointer: config.idempotency.keyPointer,
        clock,
        approvalsOn: approvals !== undefined,
        refuse: parts.refuse,
        metrics: createDuplicateMetrics(context.registry, METRIC_PREFIX),
        log,
      }
      return [{ name: 'duplicates', register: async (app) => { await app.register(duplicatesCheck, options) } }]
    },
    async register (app, parts) {
      await app.register(limitsRoute, {
        access: parts.access,
        callers: callers === null ? null : callers.current,
        state: parts.store,
        held: async (callerId) => await (approvals?.heldFor(callerId) ?? Promise.resolve([])),
        clock,
      })
    },
    close: async () => { await store?.close() },
  }
}
