/**
 * buildInbox(config, deps): the webhook inbox (SPEC §10) as a second Fastify instance beside the
 * proxy's, never listening by itself (process/serve.ts does). It serves `POST /webhooks/<path token>` and
 * `GET /healthz`, nothing else, and owns an outbox (outbox/: its store and its deliverer). It
 * imports nothing of the proxy's plugins, and they nothing of it.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import type { Dispatcher } from 'undici'
import { systemClock, type Clock } from '../clock.js'
import type { Config } from '../config/config.js'
import type { WebhookConfig } from '../config/webhook-config.js'
import { blockListOf } from '../config/network-lists.js'
import { appOptions } from '../http/app-options.js'
import { createClientErrorHandler, createExpectationHandler } from '../http/client-errors.js'
import { DEFAULT_LINGER, type LingerBounds } from '../http/lingering-close.js'
import { listenerServerOptions } from '../http/listener-server.js'
import { METRIC_PREFIX } from '../ops/metrics.js'
import { createDeliverer, type Deliverer } from '../outbox/deliverer.js'
import type { OutboxStore } from '../outbox/outbox-store.js'
import { createStorage, type Storage } from '../storage/storage.js'
import { inboxErrors } from './inbox-errors.js'
import { createInboxMetrics, noInboxObserver, type HeldKind, type InboxObserver } from './inbox-metrics.js'
import type { IntakePacer } from './intake-pacing.js'
import { intakeRoute } from './intake-route.js'
import { openStore } from './open-store.js'
import { createPathTokenMatcher } from './path-token.js'

/** Slow senders: headers within 10 s, the whole request within 30 s (as the proxy's listener). */
const HEADERS_TIMEOUT_MS = 10_000
const REQUEST_TIMEOUT_MS = 30_000

/**
 * Connections the kernel completes for the listener before it accepts them. A provider's burst
 * opens hundreds at once; past Node's default of 511 the kernel drops their SYNs, and each sender's
 * kernel tries again after 1 s, 3 s, 7 s: of 1,000 events sent at once, 414 connected a second or
 * more late on an idle machine, and on a busy one some after 12 s, past SPEC §10's 5 s
 * (docs/performance.md, "A burst of events"). Linux caps it at net.core.somaxconn (4096 since 5.4).
 */
export const INTAKE_BACKLOG = 4096

export interface InboxDeps {
  logger: Logger
  clock?: Clock
  /** Built from the settings and `storage` (SQLite, or Redis with PROXY_REDIS_URL) when absent. */
  store?: OutboxStore
  /**
   * What the store is opened with; made from `state` when absent and closed with the inbox: the
   * inbox's thread, an isolate of its own, has a connection of its own (`pap:inbox`).
   */
  storage?: Storage
  /** The proxy's metrics registry, so /metrics on the proxy listener shows the inbox too. */
  registry?: Registry
  /** Told of intakes and deliveries instead of a registry's metrics (the inbox's thread, inbox-thread-program.ts). */
  observer?: InboxObserver
  /** Outbound dispatcher for deliveries; one of the inbox's own when absent. */
  dispatcher?: Dispatcher
  linger?: LingerBounds
  /** Slow-sender bounds (headers, whole request); tests shorten them. */
  timeouts?: { headersMs: number, requestMs: number }
  random?: () => number
  /** Told of every event stored, after the deliverer (payments, SPEC §12, then read the store). */
  onStored?: (() => void) | undefined
  /** Hold events, and deliveries, while the proxy is busy (intake-pacing.ts; one pacer each); absent: never held. */
  pacers?: { intake: IntakePacer, delivery: IntakePacer } | undefined
}

/** A pacer whose holds are counted (`webhooks_held_total`, `webhooks_held_seconds_total`). */
function counted (pacer: IntakePacer, kind: HeldKind, observer: InboxObserver): IntakePacer {
  return {
    waitMs () {
      const ms = pacer.waitMs()
      if (ms > 0) observer.held(kind, ms / 1000)
      return ms
    },
  }
}

export interface WebhooksReadiness { ready: boolean, pending: number, failed: number, oldestPendingAgeSeconds: number }

export interface Inbox {
  app: FastifyInstance
  store: OutboxStore
  deliverer: Deliverer
  readiness: () => Promise<WebhooksReadiness>
}

export async function buildInbox (settings: WebhookConfig, state: Config['state'], deps: InboxDeps): Promise<Inbox> {
  const clock = deps.clock ?? systemClock
  const log = deps.logger.child({ component: 'webhooks' })
  const storage = deps.storage ?? createStorage(state, 'inbox')
  const store = deps.store ?? await openStore(settings, { storage, log })
  const observer = deps.observer ?? (deps.registry === undefined
    ? noInboxObserver
    : createInboxMetrics(deps.registry, METRIC_PREFIX, () => store.stats(), () => clock.wallMs()))
  const linger = deps.linger ?? DEFAULT_LINGER
  // Requests that sent `Expect: 100-continue`: Node leaves the interim answer to us (SPEC §5's rule).
  const awaitingContinue = new WeakSet<IncomingMessage>()
  const app = Fastify({
    ...appOptions(log),
    serverFactory: (handler) => inboxNodeServer(
      handler,
      log,
      linger,
      deps.timeouts ?? { headersMs: HEADERS_TIMEOUT_MS, requestMs: REQUEST_TIMEOUT_MS },
      awaitingContinue,
    ),
    clientErrorHandler: createClientErrorHandler(log, linger, notAnIntake),
  })
  app.removeAllContentTypeParsers()
  // Any content type is taken, byte for byte (SPEC §10); the route's bodyLimit bounds it. Fastify
  // refuses a Content-Type that is not a media type (`;`, `garbage`, empty) with a 415 before any
  // parser sees it: the parser is told every body is bytes, and the sender's header is stored and
  // delivered as sent, from the raw headers.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => { done(null, body) })
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.raw.headers['content-type'] !== undefined) request.raw.headers['content-type'] = 'application/octet-stream'
    done()
  })
  inboxErrors(app, { bodyLimitBytes: settings.bodyLimitBytes, linger, observer })
  app.get('/healthz', async () => ({ status: 'ok' }))
  const pacers = deps.pacers === undefined ? undefined : { intake: counted(deps.pacers.intake, 'intake', observer), delivery: counted(deps.pacers.delivery, 'delivery', observer) }
  const deliverer = createDeliverer({
    settings,
    store,
    log,
    clock,
    observer,
    dispatcher: deps.dispatcher,
    random: deps.random,
    pace: pacers?.delivery.waitMs,
  })
  await app.register(intakeRoute, {
    settings,
    store,
    matchesToken: createPathTokenMatcher(settings.pathTokens),
    trusted: blockListOf(settings.trustedProxies),
    allowed: settings.allowedSources.length === 0 ? null : blockListOf(settings.allowedSources),
    observer,
    clock,
    onStored: deps.onStored === undefined ? deliverer.wake : () => { deliverer.wake(); deps.onStored?.() },
    pacer: pacers?.intake,
    awaitsContinue: (req) => awaitingContinue.delete(req),
  })
  app.addHook('onReady', async () => { deliverer.start() })
  // Intakes in progress finish storing and are answered (Fastify waits for them); deliveries in
  // flight are abandoned without counting as an attempt, and resume at the next start.
  app.addHook('onClose', async () => {
    await deliverer.stop()
    if (deps.store === undefined) await store.close()
    if (deps.storage === undefined) await storage.close()
  })

  const readiness = async (): Promise<WebhooksReadiness> => {
    const stats = await store.stats()
    const age = stats.oldestPendingReceivedAtMs === null
      ? 0
      : Math.max(0, Math.floor((clock.wallMs() - stats.oldestPendingReceivedAtMs) / 1000))
    // Not ready while the store refuses events: down, or pending and failed events alone fill it.
    return {
      ready: store.ready() && !stats.full,
      pending: stats.pending,
      failed: stats.failed,
      oldestPendingAgeSeconds: age,
    }
  }
  return { app, store, deliverer, readiness }
}

/**
 * The inbox counts intakes by outcome (SPEC §10); a request refused by Node's parser before it was
 * one (malformed, an unsupported Expect) has its warn line and nothing to count.
 */
function notAnIntake (): void {}

function inboxNodeServer (
  handler: RequestListener,
  log: Logger,
  linger: LingerBounds,
  timeouts: { headersMs: number, requestMs: number },
  awaitingContinue: WeakSet<IncomingMessage>,
): Server {
  const server = createServer(listenerServerOptions(timeouts), handler)
  // With a listener, Node sends no automatic 100 Continue: the intake route does, once its checks
  // passed and the declared length is within the limit; anything else is answered without it.
  server.on('checkContinue', (req: IncomingMessage, res) => {
    awaitingContinue.add(req)
    server.emit('request', req, res)
  })
  server.on('checkExpectation', createExpectationHandler(log, linger, notAnIntake))
  return server
}
