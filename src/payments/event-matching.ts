/**
 * Events of the inbox matched to payments (SPEC §12). Payments read the inbox's store through its
 * contract (`EventFeed`, which the InboxStore keeps) after a cursor of their own, stored in the
 * payments' store and moved only once the events before it are applied: an event answered 200 is in
 * the inbox's store, so after a crash it is matched all the same. The inbox never waits for this and
 * never learns of it; it only wakes the worker when an event is stored.
 *
 * An event names its payment by transaction id or, failing that, by reference, whatever its caller
 * (the provider knows no callers). Unmatched and unreadable events are counted, never an error.
 * The first time events are read, the cursor starts at the inbox's latest event: events stored
 * before payments were on are not matched.
 */
import type { Logger } from 'pino'
import type { PaymentsConfig } from '../config/payment-config.js'
import type { EventLookupPacer } from './event-lookup-pacer.js'
import type { PaymentMetrics } from './payment-metrics.js'
import type { PaymentStore } from './payment-store.js'
import type { ApplyInput } from './payment-updater.js'
import { readEvent } from './provider-reading.js'

/** What payments need of the inbox's store. */
export interface EventFeed {
  eventsAfter: (seq: number, limit: number) => Promise<Array<{
    seq: number
    id: string
    body: Buffer
    receivedAtMs: number
  }>>
  lastEventSeq: () => Promise<number>
}

const BATCH = 100

export interface EventMatcher {
  /** Before the inbox takes events: the first time ever, the cursor starts at its latest one. */
  attach: (feed: EventFeed) => Promise<void>
  /** Matches every event stored since the cursor; one at a time (the worker's loop calls it). */
  catchUp: () => Promise<void>
}

export function createEventMatcher (
  deps: {
    store: PaymentStore
    apply: ApplyInput
    config: PaymentsConfig
    log: Logger
    metrics: PaymentMetrics
    pacer?: EventLookupPacer
  },
): EventMatcher {
  const { store, apply, config, log, metrics } = deps
  let feed: EventFeed | null = null

  async function match (event: { id: string, body: Buffer, receivedAtMs: number }): Promise<void> {
    const reading = readEvent(event.body, config)
    if (reading.kind === 'unreadable') {
      metrics.event('unmatched')
      log.info({ event: event.id, reason: reading.reason }, 'inbox event not matched to a payment: unreadable')
      return
    }
    const record = (reading.transactionId === null ? null : await store.byTransactionId(reading.transactionId)) ??
      (reading.reference === null ? null : await store.byReference(reading.reference, {}))
    if (record === null) {
      metrics.event('unmatched')
      log.info({ event: event.id }, 'inbox event not matched to a payment')
      return
    }
    metrics.event('matched')
    log.info({ payment: record.id, caller: record.caller, reference: record.externalReference, event: event.id, status: reading.status }, 'inbox event matched to a payment')
    const applied = await apply(record, { kind: 'event', event: { id: event.id, transactionId: reading.transactionId, status: reading.status, receivedAtMs: event.receivedAtMs } })
    if (applied.record?.eventLookup != null) deps.pacer?.taken(applied.record.eventLookup.atMs)
  }

  return {
    async attach (f) {
      if (await store.cursor() === null) {
        const from = await f.lastEventSeq()
        await store.advanceCursor(from)
        log.info({ from }, 'payments match the inbox\'s events stored from now on')
      }
      feed = f
    },
    async catchUp () {
      if (feed === null) return
      let cursor = await store.cursor() ?? 0
      for (;;) {
        const events = await feed.eventsAfter(cursor, BATCH)
        for (const event of events) await match(event)
        const last = events.at(-1)
        if (last === undefined) return
        cursor = last.seq
        await store.advanceCursor(cursor)
        if (events.length < BATCH) return
      }
    },
  }
}
