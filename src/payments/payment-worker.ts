/**
 * The payments' loop (SPEC §12), once a second, at once when the inbox stores an event, and again
 * whenever a look-up ends: matches the inbox's new events, then takes due payments one at a time
 * (leased, so with Redis one replica acts on a payment) and does what the state machine says is due:
 * store its notifications, look it up, or let time pass (`sending` -> `unknown`, -> `stale`).
 *
 * Look-ups are bounded twice: at most PROXY_PAYMENTS_LOOKUP_CONCURRENCY in flight in this process,
 * and PROXY_PAYMENTS_LOOKUPS_PER_SECOND admitted by §9's sliding window (shared by replicas with
 * Redis) as each is sent (payment-lookup.ts), so 10,000 payments due at once after an outage go out
 * at the configured pace, earliest first, while a look-up wanted now (an event to confirm, a
 * recheck) is due before any of them. On shutdown, look-ups in flight are abandoned and released
 * (not counted): the next start makes them; so is a look-up that sent nothing (no token).
 */
import type { Logger } from 'pino'
import type { Clock, TimerHandle } from '../clock.js'
import { serialPasses } from '../loops/serial-passes.js'
import type { EventMatcher } from './event-matching.js'
import type { ContextFor } from './payment-context.js'
import type { LookUp } from './payment-lookup.js'
import { dueWork, isEventAsked } from './payment-machine.js'
import type { PaymentMetrics } from './payment-metrics.js'
import type { PaymentNotifier } from './payment-notifier.js'
import type { PaymentRecord } from './payment-record.js'
import type { PaymentStore } from './payment-store.js'
import type { ApplyInput } from './payment-updater.js'
import { paymentView } from './payment-view.js'

export const PAYMENT_LOOK_INTERVAL_MS = 1000
const CLEANUP_INTERVAL_MS = 3_600_000
/**
 * A lease outlives the longest look-up by this much: a dead replica's look-ups are taken over once it has passed (a
 * second look-up is harmless, a GET).
 */
export const PAYMENT_LEASE_MARGIN_MS = 5_000

export interface WorkerDeps {
  store: PaymentStore
  apply: ApplyInput
  context: ContextFor
  lookUp: LookUp
  notifier: PaymentNotifier
  matcher: EventMatcher
  clock: Clock
  log: Logger
  metrics: PaymentMetrics
  concurrency: number
  /** The longest a look-up takes (PROXY_UPSTREAM_TIMEOUT_SECONDS). */
  lookupTimeoutMs: number
  /** This process (payment-follower.ts). */
  sender: string
  /**
   * The store is this process's alone (the embedded file): at start, another sender's `sending` records are orphans.
   */
  soleOwner: boolean
  /** How long settled payments are kept after they settle. */
  retentionMs: number
  /** SPEC §16: a failed payment's counted amounts back in their day, once whichever replica or pass asks. */
  giveBack: (record: PaymentRecord) => Promise<void>
}

export interface PaymentWorker {
  start: () => void
  /** Looks now: an event was stored. */
  wake: () => void
  close: () => Promise<void>
}

export function createPaymentWorker (deps: WorkerDeps): PaymentWorker {
  const { store, apply, context, clock, log, metrics } = deps
  const leaseMs = deps.lookupTimeoutMs + PAYMENT_LEASE_MARGIN_MS
  const inFlight = new Map<string, { abort: AbortController, done: Promise<void> }>()
  let timer: TimerHandle | null = null
  let later: TimerHandle | null = null
  let closed = false
  let orphansAdopted = !deps.soleOwner
  let swept = false
  let nextCleanupMs = 0

  async function adoptOrphans (): Promise<void> {
    for (const record of await store.list({ state: 'sending', limit: 10_000 })) {
      if (record.sender !== deps.sender) await apply(record, { kind: 'time', orphaned: true })
    }
    orphansAdopted = true
  }

  /**
   * Ends the lease on a record nothing changed. An unverified one keeps it until it ends: its stored
   * due time is not to be believed, so it is looked at again once per lease, not once a second.
   */
  async function releaseVerified (record: PaymentRecord): Promise<void> {
    if (record.state !== 'unverified') await store.release(record.id)
  }

  async function notify (record: PaymentRecord): Promise<void> {
    const view = paymentView(record)
    try {
      // Before its notification, so that an application told of the failure finds the amount back.
      if (record.notify.includes('payment.failed') && record.counted !== undefined) await deps.giveBack(record)
      for (const type of record.notify) await deps.notifier.notify(type, view)
    } catch (err) {
      log.error({ payment: record.id, caller: record.caller, reference: record.externalReference, err }, 'payment notification could not be stored; tried again shortly')
      await store.release(record.id)
      return
    }
    const applied = await apply(record, { kind: 'notified', types: record.notify })
    if (!applied.written) await store.release(record.id)
  }

  function lookUp (record: PaymentRecord): void {
    const abort = new AbortController()
    const startedAtMs = clock.wallMs()
    const fields = { payment: record.id, caller: record.caller, reference: record.externalReference }
    const asked = isEventAsked(record) && !(record.nextLookupAtMs !== null && record.nextLookupAtMs <= startedAtMs) ? 'event' : 'schedule'
    const done = deps.lookUp(record, abort.signal, asked).then(async (result) => {
      // Abandoned on shutdown, or nothing sent: not a look-up; made again shortly, or at the next start.
      if (abort.signal.aborted || result.kind === 'deferred') {
        if (result.kind === 'deferred' && !abort.signal.aborted) log.warn({ ...fields, reason: result.reason }, 'payment look-up deferred: nothing was sent')
        await store.release(record.id)
        if (result.kind === 'deferred') runIn(PAYMENT_LOOK_INTERVAL_MS)
        return
      }
      metrics.lookup(result.kind)
      if (result.kind === 'failed') log.warn({ ...fields, reason: result.reason }, 'payment look-up failed; the next step of the schedule follows')
      else log.info({ ...fields, outcome: result.kind, providerStatus: result.status }, 'payment looked up')
      const applied = await apply(record, { kind: 'lookup', result, startedAtMs })
      if (!applied.written) await releaseVerified(record)
    }).catch((err: unknown) => {
      log.error({ ...fields, err }, 'payment look-up could not be recorded; made again once its lease ends')
    }).finally(() => {
      inFlight.delete(record.id)
      run()
    })
    inFlight.set(record.id, { abort, done })
  }

  /** Due payments, one at a time, while look-ups may start. */
  async function drain (): Promise<void> {
    const seen = new Set<string>()
    while (!closed && inFlight.size < deps.concurrency) {
      const nowMs = clock.wallMs()
      const [record] = await store.claimDue(nowMs, 1, leaseMs)
      if (record === undefined) return
      // Its due time did not move (a store written by hand): not again in this look.
      if (seen.has(record.id)) {
        await store.release(record.id)
        return
      }
      seen.add(record.id)
      const work = dueWork(record, context(nowMs))
      if (work === 'notify') {
        await notify(record)
      } else if (work === 'time') {
        // Nothing to do though the store says it is due: its due time was written outside its record. It keeps its
        // lease, so the look goes on past it.
        await apply(record, { kind: 'time', orphaned: false })
      } else {
        lookUp(record)
      }
    }
  }

  async function look (): Promise<void> {
    // Once a start: the newest records read through their seals, so each that fails is logged and counted from the
    // start, not when first asked for.
    if (!swept) {
      await store.list({ state: 'unverified', limit: 1 })
      swept = true
    }
    if (!orphansAdopted) await adoptOrphans()
    await deps.matcher.catchUp()
    await drain()
    const nowMs = clock.wallMs()
    if (nowMs >= nextCleanupMs) {
      nextCleanupMs = nowMs + CLEANUP_INTERVAL_MS
      const removed = await store.removeSettledBefore(nowMs - deps.retentionMs)
      if (removed > 0) log.info({ removed }, 'payments retention: settled payments removed')
    }
  }

  const passes = serialPasses(look, {
    stopped: () => closed,
    counted: (outcome) => { metrics.pass(outcome) },
    log,
    failed: 'payments could not be processed; trying again every second',
    recovered: 'payments store answers again: payments are followed again',
  })
  const run = passes.run

  function runIn (ms: number): void {
    if (later !== null || closed) return
    later = clock.setTimeout(() => { later = null; run() }, Math.max(1, ms))
  }

  function schedule (): void {
    if (closed) return
    timer = clock.setTimeout(() => { run(); schedule() }, PAYMENT_LOOK_INTERVAL_MS)
  }

  return {
    start () {
      deps.notifier.start()
      run()
      schedule()
    },
    wake: run,
    async close () {
      closed = true
      if (timer !== null) clock.clearTimeout(timer)
      if (later !== null) clock.clearTimeout(later)
      for (const { abort } of inFlight.values()) abort.abort()
      await Promise.all([...inFlight.values()].map((f) => f.done))
      await passes.idle()
      await deps.notifier.stop()
    },
  }
}
