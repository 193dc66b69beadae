/**
 * buildServer(config, deps) -> the whole proxy as a Fastify instance that never listens by
 * itself: cli.ts owns the process, tests build the real thing with injected clock and logger.
 * This module wires the core (tokens, egress, the state store, callers) and each feature's share
 * (features/index.ts), naming none; the decisions live in the plugins of the pipeline's steps,
 * registered in pipeline/steps.ts's order for every proxied request, then the route (body,
 * token) -> upstream.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { IncomingMessage } from 'node:http'
import type { Logger } from 'pino'
import { createClientAccess } from './access/client-access.js'
import { clientAccessHook } from './access/client-access-hook.js'
import { ANONYMOUS_CALLER_ID } from './callers/caller.js'
import type { CallersHolder } from './callers/callers-holder.js'
import { amountLimitsPlugin } from './callers/amount-limits-plugin.js'
import { createCallerRefusals } from './callers/caller-refusals.js'
import { callerIdentity, callerRules } from './callers/callers-plugin.js'
import { systemClock, type Clock } from './clock.js'
import type { Config, EnvironmentName } from './config/config.js'
import { createEgressReporter, type EgressReporter } from './egress/egress-reporter.js'
import { createIpNotAllowedDiagnosis } from './egress/ip-not-allowed.js'
import type { ProxyError } from './errors.js'
import type { ProxyPart, SharedParts } from './feature/feature.js'
import { FEATURES } from './features/index.js'
import { errorReply } from './http/error-reply.js'
import { createClientErrorHandler, type AnswerObserver } from './http/client-errors.js'
import { createNodeServer, DEFAULT_HTTP_EDGES, type HttpEdgeSettings } from './http/node-server.js'
import { requestRefusal } from './http/request-refusal.js'
import { idempotency, inFlightTtlMs } from './idempotency/idempotency-plugin.js'
import { createIdempotencyMetrics } from './idempotency/idempotency-metrics.js'
import { createResponseRecorder, DEFAULT_RECORD_BODY_BYTES } from './idempotency/response-recorder.js'
import { createCredentialRotation, type CredentialRotation } from './ops/credential-rotation.js'
import { healthRoutes, type ReadinessSection } from './ops/health-routes.js'
import { createRestartNotice, type RestartNotice } from './ops/restart-required.js'
import { createMetrics, METRIC_PREFIX, type ProxyMetrics } from './ops/metrics.js'
import { metricsRoute } from './ops/metrics-route.js'
import type { ProxyActivity } from './ops/proxy-activity.js'
import { requestAudit } from './ops/request-audit.js'
import { createOutbound, type Outbound } from './outbound/outbound-agents.js'
import { orderSteps, type PipelineStep } from './pipeline/steps.js'
import { pathGuard } from './routing/path-guard.js'
import { proxyRoutes } from './routing/proxy-routes.js'
import { requestIdFor } from './routing/request-id.js'
import { createUrlRewriter } from './routing/request-target.js'
import { buildRouteTable, type RouteSpec } from './routing/route-table.js'
import { createStore } from './state/create-store.js'
import type { StateStore } from './state/state-store.js'
import { createStoreMetrics } from './state/store-metrics.js'
import { createStorage, type Storage } from './storage/storage.js'
import { createTokenClient, type FetchToken } from './tokens/token-client.js'
import type { TokenSource } from './tokens/token-source.js'
import { createTokenSources } from './tokens/token-sources.js'
import './routing/proxy-context.js'

export { HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from './http/node-server.js'

export interface ServerDeps {
  logger: Logger
  clock?: Clock
  outbound?: Outbound
  fetchToken?: FetchToken
  random?: () => number
  /** The shared state store (SPEC §9); built from config.state when absent. */
  store?: StateStore
  /** The process's storage (its one Redis connection), shared with the listeners beside the proxy; one of its own, closed with it, when absent. */
  storage?: Storage
  /** Slow-client timeouts and lingering-close bounds; tests shorten them. */
  httpEdges?: HttpEdgeSettings
  /** `/readyz` sections of parts the process runs beside the proxy (the inbox's, SPEC §10), before the features'. */
  readiness?: readonly ReadinessSection[]
  /** Told of every forwarded request: the inbox paces its intake while the proxy is busy (ops/proxy-activity.ts). */
  activity?: ProxyActivity | undefined
}

export interface ProxyServer {
  app: FastifyInstance
  sources: ReadonlyMap<EnvironmentName, TokenSource>
  outbound: Outbound
  egress: EgressReporter
  metrics: ProxyMetrics
  rotation: CredentialRotation
  store: StateStore
  /** The callers file in force (SPEC §7), null without one; cli.ts reloads it. */
  callers: CallersHolder | null
  /** Changed variables a reload could not apply (cli.ts compares at SIGHUP); shown in /readyz. */
  restart: RestartNotice
  /** What the features on provided (feature/feature.ts SharedParts): the console decides with them. */
  shared: Readonly<Partial<SharedParts>>
  /** SIGHUP for the features: each re-reads its files (the MCP tools file). */
  reloadFeatures: (trigger: string) => void
  /** Watches the features' files; returns the stop. */
  watchFeatures: () => () => void
}

export async function buildServer (config: Config, deps: ServerDeps): Promise<ProxyServer> {
  const clock = deps.clock ?? systemClock
  const log = deps.logger
  // First, so an invalid callers file stops the start before anything is opened. Imported only when
  // there is a file: its reader brings the YAML parser and TypeBox's checker, which a start without
  // callers need not load. A reload is refused for what a feature that is off would be needed for.
  const on = new Set<string>()
  let callers: CallersHolder | null = null
  if (config.callers.file !== null) {
    const [{ createCallersHolder }, reloadChecks] = await Promise.all([
      import('./callers/callers-holder.js'),
      Promise.all(FEATURES.map(async (feature) => ({ name: feature.name, check: await feature.callersReloadCheck?.() }))),
    ])
    callers = createCallersHolder(config.callers.file, log, (specs) => reloadChecks.flatMap(({ name, check }) => on.has(name) || check === undefined ? [] : check(specs)))
  }
  const ownsOutbound = deps.outbound === undefined
  const outbound = deps.outbound ?? createOutbound(config)
  const fetchToken = deps.fetchToken ?? createTokenClient({
    dispatcher: outbound.tokens, clock, timeoutMs: config.token.timeoutS * 1000, maxLifetimeS: config.token.maxLifetimeS,
  })
  let sources = new Map<EnvironmentName, TokenSource>()
  const metrics = createMetrics(() => sources, clock)
  // Each feature's share, in the list's order: a feature reads what the ones before it shared.
  const shared: Partial<SharedParts> = {}
  const parts: ProxyPart[] = []
  const ownsStorage = deps.storage === undefined
  const storage = deps.storage ?? createStorage(config.state, 'sidecar')
  for (const feature of FEATURES) {
    const part = await feature.proxy?.({ config, log, clock, registry: metrics.registry, callers, storage, shared })
    if (part === undefined || part === null) continue
    on.add(feature.name)
    parts.push(part)
  }
  const ownsStore = deps.store === undefined
  const store = deps.store ?? await createStore({ clock, log, storage, observer: createStoreMetrics(metrics.registry, METRIC_PREFIX) })
  sources = createTokenSources(config, { fetchToken, clock, log, random: deps.random, observer: metrics.tokenObserver })
  const egress = createEgressReporter({
    url: config.egress.url,
    intervalMs: config.egress.intervalS * 1000,
    expectedIps: config.egress.expectedIps,
    dispatcher: outbound.upstream,
    clock,
    log,
    onUpdate: (ip, expected) => { metrics.egressIp(ip, expected) },
  })
  const rotation = createCredentialRotation({
    sources, fetchToken, log, registry: metrics.registry, metricPrefix: METRIC_PREFIX, nowS: () => Math.floor(clock.wallMs() / 1000),
  })

  const restart = createRestartNotice(log)
  let closing = false
  const httpEdges = deps.httpEdges ?? DEFAULT_HTTP_EDGES
  // Answers written before any route is known are counted without environment and interface.
  const answered = (error: ProxyError): void => { metrics.requestAnswered('', '', error.statusCode, ANONYMOUS_CALLER_ID, error.code) }
  const routes = buildRouteTable(config)
  const app = createApp(config, log, httpEdges, routes, answered, firstOf(parts.map((part) => part.target)))
  await app.register(errorReply, { bodyLimitBytes: config.bodyLimitBytes, linger: httpEdges.linger })
  const access = createClientAccess(config)
  const refuse = callers === null ? null : createCallerRefusals(metrics.registry, METRIC_PREFIX)
  const proxyParts = { store, sources, dispatcher: outbound.upstream, access, refuse }
  const via = firstOf(parts.map((part) => part.via))

  // The core's steps, then each feature's, registered in pipeline/steps.ts's order.
  const callerOptions = callers === null || refuse === null ? null : { callers: callers.current, store, keyPointer: config.idempotency.keyPointer, refuse }
  const steps: PipelineStep[] = [
    { name: 'refuse', register: async (app) => { await app.register(requestRefusal, { isClosing: () => closing }) } },
    { name: 'access', register: async (app) => { await app.register(clientAccessHook, { access }) } },
    { name: 'path', register: async (app) => { await app.register(pathGuard) } },
    { name: 'audit', register: async (app) => { await app.register(requestAudit, { metrics, via, activity: deps.activity }) } },
  ]
  if (callerOptions !== null) {
    steps.push({ name: 'identify', register: async (app) => { await app.register(callerIdentity, callerOptions) } })
    steps.push({ name: 'rules', register: async (app) => { await app.register(callerRules, callerOptions) } })
  }
  let recorder: UpstreamTap | undefined
  if (config.idempotency.enabled) {
    const observer = createIdempotencyMetrics(metrics.registry, METRIC_PREFIX)
    recorder = createResponseRecorder({ store, ttlMs: config.idempotency.ttlS * 1000, maxBodyBytes: DEFAULT_RECORD_BODY_BYTES, observer })
    steps.push({ name: 'idempotency', register: async (app) => { await app.register(idempotency, { store, keyPointer: config.idempotency.keyPointer, inFlightTtlMs: inFlightTtlMs(config), observer }) } })
  }
  if (refuse !== null) steps.push({ name: 'amount', register: async (app) => { await app.register(amountLimitsPlugin, { store, clock, refuse }) } })
  for (const part of parts) steps.push(...part.steps?.(proxyParts) ?? [])
  for (const step of orderSteps(steps)) await step.register(app)

  const sections = [...deps.readiness ?? [], ...parts.flatMap((part) => part.readiness === undefined ? [] : [part.readiness])]
  await app.register(healthRoutes, { sources, egress, state: () => store.status(), rotation: rotation.status, restartRequired: restart.current, sections })
  await app.register(metricsRoute, { registry: metrics.registry })
  await app.register(proxyRoutes, {
    routes,
    sources,
    dispatcher: outbound.upstream,
    bodyLimitBytes: config.bodyLimitBytes,
    observer: createIpNotAllowedDiagnosis(egress, (environment, iface) => { metrics.ipNotAllowed(environment, iface) }),
    referencePointer: config.idempotency.keyPointer,
    tap: parts.reduce((inner, part) => part.tap === undefined ? inner : part.tap(inner), recorder),
  })
  for (const part of parts) await part.register?.(app, proxyParts)

  app.addHook('onReady', async () => {
    for (const source of sources.values()) source.start()
    egress.start()
    for (const part of parts) part.start?.()
  })
  app.addHook('preClose', async () => {
    closing = true
    for (const part of parts) await part.preClose?.()
  })
  app.addHook('onClose', async () => {
    for (const source of sources.values()) source.close()
    egress.close()
    for (const part of parts) await part.close?.()
    if (ownsOutbound) await outbound.destroy()
    if (ownsStore) await store.close()
    if (ownsStorage) await storage.close()
  })

  return {
    app, sources, outbound, egress, metrics, store, rotation, callers, restart, shared,
    reloadFeatures: (trigger) => { for (const part of parts) part.reload?.(trigger) },
    watchFeatures: () => {
      const stops = parts.flatMap((part) => part.watch === undefined ? [] : [part.watch()])
      return () => { for (const stop of stops) stop() }
    },
  }
}

type UpstreamTap = Parameters<NonNullable<ProxyPart['tap']>>[0]

/** The first answer of the features' readers that answer for `input`; undefined when no feature reads it (nothing on the hot path). */
function firstOf<I, O> (readers: ReadonlyArray<((input: I) => O | null | undefined) | undefined>): ((input: I) => O | undefined) | undefined {
  const present = readers.filter((reader) => reader !== undefined)
  if (present.length === 0) return undefined
  if (present.length === 1) {
    const [only] = present
    return (input) => only?.(input) ?? undefined
  }
  return (input) => {
    for (const reader of present) {
      const found = reader(input)
      if (found !== null && found !== undefined) return found
    }
    return undefined
  }
}

function createApp (config: Config, log: Logger, httpEdges: HttpEdgeSettings, routes: readonly RouteSpec[], answered: AnswerObserver, target: ((req: IncomingMessage) => string | undefined) | undefined): FastifyInstance {
  // Fastify infers its logger type from this option; pino's own type would leak into every route.
  const loggerInstance: FastifyBaseLogger = log
  const app = Fastify({
    loggerInstance,
    // One line per proxied request is logged by request-audit.ts, without the query string.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: requestIdFor,
    return503OnClosing: false,
    bodyLimit: config.bodyLimitBytes,
    serverFactory: (handler) => createNodeServer(handler, log, httpEdges, answered),
    clientErrorHandler: createClientErrorHandler(log, httpEdges.linger, answered),
    // The one reading of every target (SPEC §3): the router and every later hook use it.
    rewriteUrl: createUrlRewriter(routes.map((route) => route.prefix), config.paths, target),
  })
  app.decorateRequest('proxy', null)
  app.decorateRequest('caller', null)
  app.decorateRequest('heldJson', null)
  return app
}
