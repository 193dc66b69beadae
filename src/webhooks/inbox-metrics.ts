/**
 * The inbox's metrics (SPEC §10), on the registry the proxy's /metrics serves, with its prefix.
 * Labels are outcomes only: never a path, a path token or an event id. The three gauges read the
 * store when scraped (one query per scrape, not per event).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import { workerPasses } from '../ops/worker-passes.js'
import { noDeliveryObserver, type DeliveryObserver } from '../outbox/deliverer.js'
import type { OutboxStats } from '../outbox/outbox-store.js'

export type IntakeOutcomeLabel = 'stored' | 'duplicate' | 'unauthorized' | 'not_allowed' | 'too_large' | 'unavailable'
/** What a hold while the proxy was busy held back (intake-pacing.ts). */
export type HeldKind = 'intake' | 'delivery'

/** The intake's outcomes, and its store's deliveries. */
export interface InboxObserver extends DeliveryObserver {
  received: (outcome: IntakeOutcomeLabel, seconds: number | null) => void
  /** Delivered events removed before their retention to make room for new ones. */
  evicted: (events: number) => void
  /** An event, or a delivery, held while the proxy was busy. */
  held: (kind: HeldKind, seconds: number) => void
}

export const noInboxObserver: InboxObserver = { ...noDeliveryObserver, received () {}, evicted () {}, held () {} }

export function createInboxMetrics (
  registry: Registry,
  prefix: string,
  stats: () => Promise<OutboxStats>,
  nowMs: () => number,
): InboxObserver {
  const p = prefix
  const received = new Counter({ name: `${p}webhooks_received_total`, help: 'Webhook intake answers by outcome', labelNames: ['outcome'], registers: [registry] })
  const intake = new Histogram({
    name: `${p}webhook_intake_duration_seconds`, help: 'Webhook receipt to answer', registers: [registry],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5],
  })
  const evicted = new Counter({ name: `${p}webhooks_evicted_total`, help: 'Delivered events removed before the retention ended to make room for new ones (their keys no longer catch duplicates)', registers: [registry] })
  const outOfOrder = new Counter({
    name: `${p}webhooks_out_of_order_total`, help: 'Events delivered ahead of an earlier event of their order key that kept failing, after PROXY_WEBHOOK_ORDER_MAX_WAIT_SECONDS', registers: [registry],
  })
  const held = new Counter({ name: `${p}webhooks_held_total`, help: 'Events (intake) and delivery attempts (delivery) held while the proxy was busy (PROXY_WEBHOOK_RATE_WHILE_PROXYING)', labelNames: ['kind'], registers: [registry] })
  const heldSeconds = new Counter({ name: `${p}webhooks_held_seconds_total`, help: 'Time those holds lasted, in all', labelNames: ['kind'], registers: [registry] })
  const deliveries = new Counter({ name: `${p}webhook_deliveries_total`, help: 'Webhook delivery attempts by outcome', labelNames: ['outcome'], registers: [registry] })
  const delivery = new Histogram({
    name: `${p}webhook_delivery_duration_seconds`, help: 'Duration of webhook delivery attempts', registers: [registry],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 30],
  })
  // One store read per scrape, shared by the three gauges (prom-client collects them one after another).
  // A store that cannot answer (Redis down) must not take /metrics down with it: the last figures stand.
  let last: OutboxStats = { pending: 0, failed: 0, oldestPendingReceivedAtMs: null, full: false }
  let snapshot: Promise<OutboxStats> | null = null
  const read = async (): Promise<OutboxStats> => {
    snapshot ??= stats().then((s) => { last = s; return s }, () => last).finally(
      () => { setImmediate(() => { snapshot = null }) },
    )
    return await snapshot
  }
  new Gauge({ name: `${p}webhooks_pending`, help: 'Events waiting for delivery', registers: [registry], async collect () { this.set((await read()).pending) } })
  new Gauge({ name: `${p}webhooks_failed`, help: 'Events failed after the last attempt, kept until the retention ends', registers: [registry], async collect () { this.set((await read()).failed) } })
  new Gauge({
    name: `${p}webhook_oldest_pending_age_seconds`, help: 'Age of the oldest event waiting for delivery (0 when none)', registers: [registry],
    async collect () {
      const oldest = (await read()).oldestPendingReceivedAtMs
      this.set(oldest === null ? 0 : Math.max(0, (nowMs() - oldest) / 1000))
    },
  })
  for (const outcome of ['stored', 'duplicate', 'unauthorized', 'not_allowed', 'too_large', 'unavailable']) received.inc({ outcome }, 0)
  for (const outcome of ['delivered', 'failed_attempt', 'failed']) deliveries.inc({ outcome }, 0)
  for (const kind of ['intake', 'delivery']) {
    held.inc({ kind }, 0)
    heldSeconds.inc({ kind }, 0)
  }
  const pass = workerPasses(registry, p, 'webhooks')
  return {
    received (outcome, seconds) {
      received.inc({ outcome })
      if (seconds !== null) intake.observe(seconds)
    },
    delivery (outcome, seconds) {
      deliveries.inc({ outcome })
      delivery.observe(seconds)
    },
    evicted (events) { evicted.inc(events) },
    held (kind, seconds) {
      held.inc({ kind })
      heldSeconds.inc({ kind }, seconds)
    },
    outOfOrder () { outOfOrder.inc() },
    pass,
  }
}
