/**
 * Puts payments (SPEC §12) together for server.ts, which loads this module only when
 * `PROXY_PAYMENTS=on`. At start: the store, the follower (the one hook through which a send is
 * followed: the proxy's plugin and the approvals forwarder both use it), the metrics, the
 * notifications and the event matching. Then `follow` registers the plugin last of the transaction
 * checks and `tap` wraps §8's recorder; once the proxy's parts exist, `register` adds the routes and
 * the worker. process/serve.ts hands the running payments the inbox's store to read events from.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import type { Dispatcher } from 'undici'
import type { ClientAccess } from '../access/client-access.js'
import { ANONYMOUS_CALLER_ID } from '../callers/caller.js'
import type { CallerIndex } from '../callers/judge-caller.js'
import { routeCaller } from '../callers/route-caller.js'
import type { Clock } from '../clock.js'
import type { Config, EnvironmentName } from '../config/config.js'
import type { PaymentsConfig } from '../config/payment-config.js'
import { ClientNotAllowedError } from '../errors.js'
import { inFlightTtlMs } from '../idempotency/idempotency-plugin.js'
import { METRIC_PREFIX } from '../ops/metrics.js'
import type { UpstreamResponseTap } from '../routing/upstream-response.js'
import type { StateStore } from '../state/state-store.js'
import type { Storage } from '../storage/storage.js'
import type { TokenSource } from '../tokens/token-source.js'
import { approvedSendFollower } from './approved-send.js'
import { createPaymentChase, type PaymentChase } from './payment-chase.js'
import { createEventMatcher, type EventFeed } from './event-matching.js'
import { createEventLookupPacer } from './event-lookup-pacer.js'
import { EVENT_SETTLED_WARNING, eventSettledInterfaces } from './event-settled.js'
import { openPaymentStore } from './open-payment-store.js'
import { machineContext } from './payment-context.js'
import { paymentFollow, paymentTap } from './payment-follow-plugin.js'
import { createPaymentFollower, newSender, type PaymentFollower } from './payment-follower.js'
import { createLookup } from './payment-lookup.js'
import { createPaymentMetrics } from './payment-metrics.js'
import { openPaymentNotifier } from './payment-notifier.js'
import { paymentRoutes, type Asker } from './payment-routes.js'
import { createPaymentUpdater } from './payment-updater.js'
import { createPaymentWorker } from './payment-worker.js'
import type { PaymentRecord } from './payment-record.js'

/**
 * The rate's window is this much longer than a second: a GET reaches the provider a little after it
 * is admitted, by a few milliseconds more or less each time, so that the provider never sees more
 * than PROXY_PAYMENTS_LOOKUPS_PER_SECOND in any second of its own.
 */
export const LOOKUP_RATE_MARGIN_MS = 100

/**
 * Look-ups asked by events get at most half of PROXY_PAYMENTS_LOOKUPS_PER_SECOND, whatever is due:
 * half as many in the rate's window, or, at one a second, one in a window twice as long.
 */
export function eventShare (lookupsPerSecond: number, windowMs: number): { limit: number, windowMs: number } {
  return lookupsPerSecond >= 2
    ? { limit: Math.floor(lookupsPerSecond / 2), windowMs }
    : { limit: 1, windowMs: 2 * windowMs }
}

/** The `/readyz` section (SPEC §12): shown, never a reason to report not ready. */
export interface PaymentsReadiness { ready: boolean, pending: number, stale: number }

export interface RegisterDeps {
  /** The callers file in force; null without one (the anonymous caller sees every payment). */
  callers: (() => CallerIndex) | null
  access: ClientAccess
  sources: ReadonlyMap<EnvironmentName, TokenSource>
  dispatcher: Dispatcher
  /** §9's store: its sliding window bounds look-ups per second, for every replica together. */
  state: StateStore
}

export interface RunningPayments {
  start: () => void
  /** The inbox stored an event. */
  wake: () => void
  /** The inbox's store, read after the payments' own cursor; before the inbox takes events. */
  readEvents: (feed: EventFeed) => Promise<void>
  /** Stale and unknown payments and their recheck, for the console (SPEC §14). */
  chase: PaymentChase
  close: () => Promise<void>
}

export interface Payments {
  /** The approvals forwarder's follow hook: an approved request is followed once it is forwarded. */
  approvedSends: ReturnType<typeof approvedSendFollower>
  follow: (app: FastifyInstance, keyPointer: string) => Promise<void>
  tap: (inner: UpstreamResponseTap | undefined) => UpstreamResponseTap
  /** Whether a request is followed (SPEC §12's PROXY_PAYMENTS_PATHS). */
  follows: PaymentFollower['follows']
  /** What became of a payment by its id, as its seals vouch (`unverified` when they fail); null when there is none. */
  find: (id: string) => Promise<{ state: string, externalReference: string, createdAt: number } | null>
  readiness: () => Promise<PaymentsReadiness>
  register: (app: FastifyInstance, deps: RegisterDeps) => Promise<RunningPayments>
  /** Closes the store (after the worker, when it ran). */
  close: () => Promise<void>
}

export async function preparePayments (
  config: Config & { payments: PaymentsConfig },
  deps: { log: Logger, clock: Clock, registry: Registry, storage: Storage },
): Promise<Payments> {
  const settings = config.payments
  const { log, clock, storage } = deps
  const store = await openPaymentStore(settings, storage, log)
  const metrics = createPaymentMetrics(deps.registry, METRIC_PREFIX, async () => await store.counts())
  const share = eventShare(settings.lookupsPerSecond, 1000 + LOOKUP_RATE_MARGIN_MS)
  const pacer = createEventLookupPacer(share.limit, share.windowMs)
  const context = machineContext(settings, inFlightTtlMs(config), Math.random, pacer)
  const apply = createPaymentUpdater({ store, context, clock, log, metrics })
  const sender = newSender()
  const follower = createPaymentFollower({ config: settings, store, apply, context, clock, log, sender })
  const notifier = await openPaymentNotifier(settings, storage, { log, clock, registry: deps.registry })
  const matcher = createEventMatcher({ store, apply, config: settings, log, metrics, pacer })
  for (const settled of eventSettledInterfaces(settings, config.environments)) log.warn(
    { interface: settled.interface, because: settled.why },
    EVENT_SETTLED_WARNING,
  )

  return {
    approvedSends: approvedSendFollower(follower),
    follow: async (app, keyPointer) => { await app.register(paymentFollow, { follower, keyPointer }) },
    tap: (inner) => paymentTap(follower, inner),
    follows: follower.follows,
    async find (id) {
      const record = await store.get(id)
      if (record === null) return null
      const { state, externalReference, createdAtMs } = record
      return { state, externalReference, createdAt: Math.floor(createdAtMs / 1000) }
    },
    async readiness () {
      const counts = await store.counts()
      return { ready: store.ready(), pending: counts.pending, stale: counts.stale }
    },
    async register (app, registerDeps) {
      await app.register(paymentRoutes, { store, identify: askerOf(registerDeps.access, registerDeps.callers) })
      const lookUp = createLookup({
        config: settings,
        environments: config.environments,
        sources: registerDeps.sources,
        dispatcher: registerDeps.dispatcher,
        timeoutMs: config.upstream.timeoutS * 1000,
        admit: async (asker) => {
          const windowMs = 1000 + LOOKUP_RATE_MARGIN_MS
          if (asker === 'event') {
            const shared = await registerDeps.state.hit('payments:lookups:events', share.limit, share.windowMs)
            if (!shared.admitted) return shared
          }
          return await registerDeps.state.hit('payments:lookups', settings.lookupsPerSecond, windowMs)
        },
      })
      const worker = createPaymentWorker({
        store,
        apply,
        context,
        lookUp,
        notifier,
        matcher,
        clock,
        log,
        metrics,
        concurrency: settings.lookupConcurrency,
        lookupTimeoutMs: config.upstream.timeoutS * 1000,
        sender,
        soleOwner: config.state.redisUrl === null,
        retentionMs: settings.retentionS * 1000,
        giveBack: async (record) => { await giveBackCounted(registerDeps.state, record, log) },
      })
      return {
        start: worker.start,
        wake: worker.wake,
        readEvents: matcher.attach,
        chase: createPaymentChase(store, apply, worker.wake),
        close: worker.close,
      }
    },
    close: async () => { await store.close() },
  }
}

/**
 * SPEC §16: a followed payment that ends `failed` gives what it counted back to the day it was counted in. Each amount
 * is named for the payment, so a second pass or another replica gives back nothing more.
 */
async function giveBackCounted (state: StateStore, record: PaymentRecord, log: Logger): Promise<void> {
  const counted = record.counted ?? []
  for (const [i, amount] of counted.entries()) await state.release(amount.key, BigInt(amount.units), `payment-failed:${record.id}:${i}`)
  if (counted.length > 0) log.info({ payment: record.id, caller: record.caller, amount: record.amount, currency: record.currency }, 'failed payment: its amount is given back to the day it was counted in')
}

/** §5's client rules, then §7's identity, as for proxied requests; approvers see every caller's payments. */
function askerOf (access: ClientAccess, callers: (() => CallerIndex) | null): (request: FastifyRequest) => Asker {
  return (request) => {
    if (callers !== null) {
      const caller = routeCaller(access, callers(), request)
      return { id: caller.id, seesAll: caller.approver }
    }
    const decision = access.check(request.raw.socket.remoteAddress, request.headers)
    if (!decision.ok) throw new ClientNotAllowedError(`Refused: ${decision.reason}`)
    return { id: ANONYMOUS_CALLER_ID, seesAll: true }
  }
}
