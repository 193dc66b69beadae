/**
 * Payments' metrics (SPEC §12), named as the SPEC names them, on the registry the proxy's /metrics
 * serves, with its prefix. Labels are outcomes only, never a reference or an id. The gauges
 * read the store when scraped (one read per scrape, shared); a store that cannot answer keeps the
 * last figures rather than taking /metrics down.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import { workerPasses, type PassOutcome } from '../ops/worker-passes.js'
import type { SettledBy } from './payment-record.js'
import type { PaymentCounts } from './payment-store.js'

export type TrackedOutcome = 'followed' | 'settled_at_once' | 'untracked' | 'unknown'
export type LookupMetricOutcome = 'final' | 'pending' | 'failed'
export type EventOutcome = 'matched' | 'unmatched' | 'disputed'

export interface PaymentMetrics {
  tracked: (outcome: TrackedOutcome) => void
  settled: (by: SettledBy, seconds: number) => void
  lookup: (outcome: LookupMetricOutcome) => void
  event: (outcome: EventOutcome) => void
  /** A pass of the payments' loop ended (`worker_passes_total{worker="payments"}`). */
  pass: (outcome: PassOutcome) => void
}

export function createPaymentMetrics (
  registry: Registry,
  prefix: string,
  counts: () => Promise<PaymentCounts>,
): PaymentMetrics {
  const p = prefix
  const tracked = new Counter({ name: `${p}payments_tracked_total`, help: 'Followed POSTs by outcome: followed, settled_at_once, untracked, unknown', labelNames: ['outcome'], registers: [registry] })
  const settle = new Histogram({
    name: `${p}payment_settle_seconds`, help: 'Creation to final state, by what settled it (answer, event, lookup)', labelNames: ['settled_by'], registers: [registry],
    buckets: [1, 5, 15, 60, 300, 900, 3600, 10800, 21600, 43200, 86400, 172800],
  })
  const lookups = new Counter({ name: `${p}payment_lookups_total`, help: 'Look-ups by outcome: final, pending, failed', labelNames: ['outcome'], registers: [registry] })
  const events = new Counter({ name: `${p}payment_events_total`, help: 'Inbox events by outcome: matched, unmatched, disputed', labelNames: ['outcome'], registers: [registry] })
  let last: PaymentCounts = { pending: 0, stale: 0, unknown: 0, unverified: 0 }
  let snapshot: Promise<PaymentCounts> | null = null
  const read = async (): Promise<PaymentCounts> => {
    snapshot ??= counts().then((c) => { last = c; return c }, () => last).finally(
      () => { setImmediate(() => { snapshot = null }) },
    )
    return await snapshot
  }
  new Gauge({ name: `${p}payments_pending`, help: 'Payments followed and not yet final', registers: [registry], async collect () { this.set((await read()).pending) } })
  new Gauge({ name: `${p}payments_stale`, help: 'Payments still not final after the last look-up step', registers: [registry], async collect () { this.set((await read()).stale) } })
  new Gauge({ name: `${p}payments_unverified`, help: 'Payment records this process read whose seals do not verify (never notified, never final but by a look-up)', registers: [registry], async collect () { this.set((await read()).unverified) } })
  for (const outcome of ['followed', 'settled_at_once', 'untracked', 'unknown']) tracked.inc({ outcome }, 0)
  for (const outcome of ['final', 'pending', 'failed']) lookups.inc({ outcome }, 0)
  for (const outcome of ['matched', 'unmatched', 'disputed']) events.inc({ outcome }, 0)
  const pass = workerPasses(registry, p, 'payments')
  return {
    tracked: (outcome) => { tracked.inc({ outcome }) },
    settled: (by, seconds) => { settle.observe({ settled_by: by }, seconds) },
    lookup: (outcome) => { lookups.inc({ outcome }) },
    event: (outcome) => { events.inc({ outcome }) },
    pass,
  }
}
