/**
 * Payments' share of the proxy (SPEC §12), loaded only with PROXY_PAYMENTS=on: the `follow` step
 * (a payment's intent written before it is forwarded), the tap on each upstream answer, the
 * `/readyz` section, the routes and the worker. Shared as `payments`: the approvals forwarder's
 * follow hook, and once registered the running worker (the inbox's events, the console's chase).
 * MCP is offered its look-ups.
 */
import type { ProxyContext, ProxyPart } from '../feature/feature.js'
import type { PaymentsConfig } from '../config/payment-config.js'
import { offerTools } from '../feature/feature-tools.js'
import { PAYMENT_TOOLS } from './payment-tools.js'
import { preparePayments, type Payments, type RunningPayments } from './payments-setup.js'

export interface PaymentsShared {
  approvedSends: Payments['approvedSends']
  /** SPEC §16's duplicate check asks which requests are followed, and what became of an earlier payout. */
  follows: Payments['follows']
  find: Payments['find']
  /** Set once the routes and the worker are registered. */
  running: RunningPayments | null
}

declare module '../feature/feature.js' {
  interface SharedParts { payments: PaymentsShared }
}

export async function paymentsPart (context: ProxyContext, settings: PaymentsConfig): Promise<ProxyPart> {
  const { config, log, clock, callers } = context
  const payments = await preparePayments({ ...config, payments: settings }, {
    log,
    clock,
    registry: context.registry,
    storage: context.storage,
  })
  const shared: PaymentsShared = {
    approvedSends: payments.approvedSends,
    follows: payments.follows,
    find: payments.find,
    running: null,
  }
  context.shared.payments = shared
  offerTools(context.shared, PAYMENT_TOOLS)
  return {
    steps: () => [{ name: 'follow', register: async (app) => { await payments.follow(app, config.idempotency.keyPointer) } }],
    tap: payments.tap,
    readiness: { name: 'payments', read: async () => await payments.readiness().catch(() => ({ ready: false, pending: 0, stale: 0 })) },
    async register (app, parts) {
      shared.running = await payments.register(app, {
        callers: callers === null ? null : callers.current,
        access: parts.access,
        sources: parts.sources,
        dispatcher: parts.dispatcher,
        state: parts.store,
      })
    },
    start: () => { shared.running?.start() },
    // The worker stops first: it reads the inbox's store, which closes beside the proxy; requests
    // still in flight record their answers through the payments' store until the close.
    preClose: async () => { await shared.running?.close() },
    close: payments.close,
  }
}
