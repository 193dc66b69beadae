/**
 * The delivery worker of an outbox (SPEC §10's inbox; every notification outbox): claims due events
 * from its store (at most one in flight per order key, unless a later one has waited the order wait,
 * order-wait.ts; at most `concurrency` in all), attempts each, and records what next-step.ts decides.
 * It looks for due events when told an event was stored, when an attempt ends, and every second
 * otherwise (so a `webhooks replay` from another process is picked up within 2 s). On stop, attempts in flight are
 * abandoned and released without counting as attempts: they resume at the next start.
 */
import type { Logger } from 'pino'
import type { Dispatcher } from 'undici'
import type { Clock, TimerHandle } from '../clock.js'
import { serialPasses } from '../loops/serial-passes.js'
import { attemptDelivery } from './delivery-attempt.js'
import { createDeliveryAgent } from './delivery-agent.js'
import type { ClaimedEvent, OutboxStore } from './outbox-store.js'
import { nextStep, type AttemptAnswer } from './next-step.js'
import { signingKeyOf } from './standard-webhooks.js'

export const POLL_INTERVAL_MS = 1_000
/** SPEC §10: a dead replica's deliveries are taken over within the delivery timeout + 30 s. */
export const LEASE_MARGIN_MS = 30_000
const CLEANUP_INTERVAL_MS = 3_600_000

interface Attempt { answer: AttemptAnswer, atMs: number, durationMs: number }

export interface Deliverer {
  start: () => void
  /** An event was stored: look for due events now. */
  wake: () => void
  stop: () => Promise<void>
}

/** Where and how one outbox delivers (the inbox's from PROXY_WEBHOOK_*; a notification outbox's its own). */
export interface DeliverySettings {
  /** The receiver's `http(s)` URL. */
  deliverTo: string
  /** `whsec_…` Standard Webhooks secrets: the current one first, then a previous one during a rotation. */
  signingSecrets: readonly string[]
  deliveryTimeoutS: number
  concurrency: number
  /** Waits after each failed attempt, in milliseconds: its length + 1 is the number of attempts. */
  retryScheduleMs: readonly number[]
  /** Delivered and failed events are removed this long after their receipt. */
  retentionS: number
}

export type DeliveryOutcomeLabel = 'delivered' | 'failed_attempt' | 'failed'

/** Told of every attempt's outcome, and of every look for due events, for metrics. */
export interface DeliveryObserver {
  delivery: (outcome: DeliveryOutcomeLabel, seconds: number) => void
  /** An event delivered ahead of an earlier one of its order key, after the order wait. */
  outOfOrder: () => void
  /** A look for due events ended (`worker_passes_total`): `failed` when the store did not answer. */
  pass: (outcome: 'done' | 'failed') => void
}

export const noDeliveryObserver: DeliveryObserver = { delivery () {}, outOfOrder () {}, pass () {} }

export interface DelivererDeps {
  settings: DeliverySettings
  store: OutboxStore
  log: Logger
  clock: Clock
  observer: DeliveryObserver
  dispatcher?: Dispatcher | undefined
  random?: (() => number) | undefined
  /** How long to hold the next attempt (the inbox's pacing while the proxy is busy); absent: never held. */
  pace?: (() => number) | undefined
  /**
   * Vets each event before its first byte is sent (a notification outbox's seal): the event to send,
   * or why it must never be sent, and then it is failed at once, not retried. Absent: sent as stored.
   */
  vet?: ((event: ClaimedEvent) => ClaimedEvent | { refused: string }) | undefined
}

export function createDeliverer (deps: DelivererDeps): Deliverer {
  const { settings, store, log, clock, observer } = deps
  const random = deps.random ?? Math.random
  const timeoutMs = settings.deliveryTimeoutS * 1000
  const ownAgent = deps.dispatcher === undefined ? createDeliveryAgent(timeoutMs, settings.concurrency) : null
  const target = {
    url: new URL(settings.deliverTo),
    dispatcher: deps.dispatcher ?? ownAgent as Dispatcher,
    keys: settings.signingSecrets.map(signingKeyOf),
    timeoutMs,
  }
  const inFlight = new Map<string, { abort: AbortController, done: Promise<void> }>()
  const recording = new Set<Promise<void>>()
  let running = false
  let poll: TimerHandle | null = null
  let cleanup: TimerHandle | null = null
  let stopped: Promise<void> | null = null

  const claim = async (): Promise<void> => {
    const free = settings.concurrency - inFlight.size
    if (free <= 0) return
    const events = await store.claimDue(clock.wallMs(), free, timeoutMs + LEASE_MARGIN_MS)
    for (const event of events) deliver(event)
  }
  const passes = serialPasses(claim, {
    stopped: () => !running,
    counted: (outcome) => { observer.pass(outcome) },
    log,
    failed: 'webhook store read failed: deliveries wait until it answers',
    recovered: 'webhook store answers again: deliveries resume',
  })
  const look = passes.run

  // An attempt holds its slot until the application has answered; recording the answer (a synced
  // commit) happens after, so the next attempt need not wait for the disk. The event stays leased
  // until its answer is recorded, so it is not handed out again meanwhile, nor its order key's next event.
  const deliver = (stored: ClaimedEvent): void => {
    const vetted = deps.vet?.(stored) ?? stored
    if ('refused' in vetted) {
      refuse(stored, vetted.refused)
      return
    }
    const event = vetted
    const abort = new AbortController()
    const done = attempt(event, abort.signal)
      .then((made) => { if (made !== null) recordInBackground(event, made) })
      .catch((err: unknown) => { log.error({ err, id: event.id }, 'webhook delivery could not be released') })
      .finally(() => { inFlight.delete(event.id); look() })
    inFlight.set(event.id, { abort, done })
  }
  const refuse = (event: ClaimedEvent, why: string): void => {
    const atMs = clock.wallMs()
    log.error({ id: event.id, key: event.key, failed: why }, 'notification failed verification: never sent (was the outbox written by hand, or sealed with another sealing secret?)')
    observer.delivery('failed', 0)
    const settled: Promise<void> = store.settle(event.id, { atMs, status: null, error: `failed verification (${why})`, durationMs: 0 }, { status: 'failed' })
      .catch((err: unknown) => { log.error({ err, id: event.id }, 'webhook delivery could not be recorded') })
      .finally(() => { recording.delete(settled) })
    recording.add(settled)
  }
  const recordInBackground = (event: ClaimedEvent, made: Attempt): void => {
    const recorded: Promise<void> = record(event, made)
      .catch((err: unknown) => { log.error({ err, id: event.id }, 'webhook delivery could not be recorded') })
      .finally(() => { recording.delete(recorded); look() })
    recording.add(recorded)
  }
  /** null: abandoned on stop, released without counting as an attempt. */
  const attempt = async (event: ClaimedEvent, signal: AbortSignal): Promise<Attempt | null> => {
    const holdMs = deps.pace?.() ?? 0
    if (holdMs > 0) await held(holdMs, signal)
    if (signal.aborted) {
      await store.release(event.id)
      return null
    }
    const atMs = clock.wallMs()
    const started = clock.monotonicMs()
    const answer = await attemptDelivery(event, target, Math.floor(atMs / 1000), signal)
    const durationMs = clock.monotonicMs() - started
    if (signal.aborted) {
      await store.release(event.id)
      return null
    }
    return { answer, atMs, durationMs }
  }
  const held = (ms: number, signal: AbortSignal): Promise<void> => new Promise((resolve) => {
    const timer = clock.setTimeout(() => { signal.removeEventListener('abort', cut); resolve() }, ms)
    const cut = (): void => { clock.clearTimeout(timer); resolve() }
    signal.addEventListener('abort', cut, { once: true })
  })
  const record = async (event: ClaimedEvent, { answer, atMs, durationMs }: Attempt): Promise<void> => {
    const next = nextStep(event.attempts, answer, clock.wallMs(), settings.retryScheduleMs, random())
    const status = answer.kind === 'status' ? answer.status : null
    await store.settle(event.id, { atMs, status, error: answer.kind === 'error' ? answer.reason : null, durationMs }, next)
    const line = {
      id: event.id, key: event.key, orderKey: event.orderKey, attempt: event.attempts + 1, status, error: answer.kind === 'error' ? answer.reason : undefined, waitedBehind: event.waitedBehind ?? undefined,
    }
    if (next.status === 'delivered') {
      log.info(line, 'webhook delivered')
      observer.delivery('delivered', durationMs / 1000)
      if (event.waitedBehind !== null) {
        log.warn({
          id: event.id,
          orderKey: event.orderKey,
          waitedBehind: event.waitedBehind,
          receivedAt: new Date(event.receivedAtMs).toISOString(),
        },
          'webhook delivered out of order: it waited the order wait (PROXY_WEBHOOK_ORDER_MAX_WAIT_SECONDS) behind an earlier event of its order key that is not delivered')
        observer.outOfOrder()
      }
    } else if (next.status === 'pending') {
      log.warn({ ...line, nextAttemptAt: new Date(next.nextAttemptAtMs).toISOString() }, 'webhook delivery failed; will retry')
      observer.delivery('failed_attempt', durationMs / 1000)
    } else {
      log.error(line, 'webhook failed after the last attempt')
      observer.delivery('failed', durationMs / 1000)
    }
  }
  const tick = (): void => {
    look()
    poll = clock.setTimeout(tick, POLL_INTERVAL_MS)
  }
  const removeExpired = (): void => {
    store.removeSettledBefore(clock.wallMs() - settings.retentionS * 1000)
      .then((n) => { if (n > 0) log.info({ removed: n }, 'webhook retention: delivered and failed events removed') })
      .catch((err: unknown) => { log.error({ err }, 'webhook retention cleanup failed') })
    cleanup = clock.setTimeout(removeExpired, CLEANUP_INTERVAL_MS)
  }

  return {
    start () {
      if (running || stopped !== null) return
      running = true
      tick()
      removeExpired()
    },
    wake: look,
    stop () {
      stopped ??= (async () => {
        running = false
        if (poll !== null) clock.clearTimeout(poll)
        if (cleanup !== null) clock.clearTimeout(cleanup)
        for (const { abort } of inFlight.values()) abort.abort()
        await Promise.all([...inFlight.values()].map((f) => f.done))
        // Answers already received are recorded: they were attempts.
        await Promise.all([...recording])
        await ownAgent?.destroy()
      })()
      return stopped
    },
  }
}
