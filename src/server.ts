/**
 * buildServer(config, deps) -> the whole proxy as a Fastify instance that never listens by itself (process/ owns the
 * process; tests build the real thing with an injected clock and logger). It wires the core and each feature's share
 * (features/index.ts), naming none; the decisions are the pipeline's steps, in pipeline/steps.ts's order, then the
 * route (body, token) -> upstream.
 */
import { createClientAccess } from './access/client-access.js'
import { ANONYMOUS_CALLER_ID } from './callers/caller.js'
import { createCallerRefusals } from './callers/caller-refusals.js'
import { systemClock } from './clock.js'
import type { Config, EnvironmentName } from './config/config.js'
import { createIpNotAllowedDiagnosis } from './egress/ip-not-allowed.js'
import type { ProxyError } from './errors.js'
import type { ProxyPart, SharedParts } from './feature/feature.js'
import { FEATURES } from './features/index.js'
import { errorReply } from './http/error-reply.js'
import { DEFAULT_HTTP_EDGES } from './http/node-server.js'
import { healthRoutes } from './ops/health-routes.js'
import { createRestartNotice } from './ops/restart-required.js'
import { createMetrics, METRIC_PREFIX } from './ops/metrics.js'
import { metricsRoute } from './ops/metrics-route.js'
import { createOutbound } from './outbound/outbound-agents.js'
import { coreSteps } from './pipeline/core-steps.js'
import { orderSteps } from './pipeline/steps.js'
import { createCoreServices } from './proxy/core-services.js'
import { createApp } from './proxy/create-app.js'
import { firstAnswer } from './proxy/first-answer.js'
import { addLifecycle, featureControls } from './proxy/lifecycle.js'
import type { ProxyServer, ServerDeps } from './proxy/proxy-server.js'
import { openCallers } from './proxy/open-callers.js'
import { proxyRoutes } from './routing/proxy-routes.js'
import { buildRouteTable } from './routing/route-table.js'
import { createStore } from './state/create-store.js'
import { createStoreMetrics } from './state/store-metrics.js'
import { createStorage } from './storage/storage.js'
import { createTokenClient } from './tokens/token-client.js'
import type { TokenSource } from './tokens/token-source.js'

export { HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from './http/node-server.js'

export type { ProxyServer, ServerDeps } from './proxy/proxy-server.js'

export async function buildServer (config: Config, deps: ServerDeps): Promise<ProxyServer> {
  const clock = deps.clock ?? systemClock
  const log = deps.logger
  const on = new Set<string>()
  const callers = await openCallers(config, log, FEATURES, (name) => on.has(name))
  const ownsOutbound = deps.outbound === undefined
  const outbound = deps.outbound ?? createOutbound(config)
  const fetchToken = deps.fetchToken ?? createTokenClient({
    dispatcher: outbound.tokens, clock,
    timeoutMs: config.token.timeoutS * 1000, maxLifetimeS: config.token.maxLifetimeS,
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
  const store = deps.store ??
    await createStore({ clock, log, storage, observer: createStoreMetrics(metrics.registry, METRIC_PREFIX) })
  const core = createCoreServices({ config, clock, log, outbound, fetchToken, metrics, random: deps.random })
  sources = core.sources
  const { egress, rotation } = core
  const restart = createRestartNotice(log)
  let closing = false
  const httpEdges = deps.httpEdges ?? DEFAULT_HTTP_EDGES
  // Answers written before any route is known are counted without environment and interface.
  const answered = (error: ProxyError): void => {
    metrics.requestAnswered('', '', error.statusCode, ANONYMOUS_CALLER_ID, error.code)
  }
  const routes = buildRouteTable(config)
  const app = createApp({
    config, log, httpEdges, routes, answered, target: firstAnswer(parts.map((part) => part.target)),
  })
  await app.register(errorReply, { bodyLimitBytes: config.bodyLimitBytes, linger: httpEdges.linger })
  const access = createClientAccess(config)
  const refuse = callers === null ? null : createCallerRefusals(metrics.registry, METRIC_PREFIX)
  const proxyParts = { store, sources, dispatcher: outbound.upstream, access, refuse }
  const via = firstAnswer(parts.map((part) => part.via))
  const pipeline = coreSteps({
    config, store, clock, metrics, access, callers, refuse, via, activity: deps.activity, isClosing: () => closing,
  })
  const steps = [...pipeline.steps, ...parts.flatMap((part) => part.steps?.(proxyParts) ?? [])]
  for (const step of orderSteps(steps)) await step.register(app)

  const sections = [
    ...deps.readiness ?? [], ...parts.flatMap((part) => part.readiness === undefined ? [] : [part.readiness]),
  ]
  await app.register(healthRoutes, {
    sources, egress, state: () => store.status(), rotation: rotation.status, restartRequired: restart.current, sections,
  })
  await app.register(metricsRoute, { registry: metrics.registry })
  await app.register(proxyRoutes, {
    routes,
    sources,
    dispatcher: outbound.upstream,
    bodyLimitBytes: config.bodyLimitBytes,
    observer: createIpNotAllowedDiagnosis(egress, (environment, iface) => { metrics.ipNotAllowed(environment, iface) }),
    referencePointer: config.idempotency.keyPointer,
    tap: parts.reduce((inner, part) => part.tap === undefined ? inner : part.tap(inner), pipeline.recorder),
  })
  for (const part of parts) await part.register?.(app, proxyParts)

  const owned = [
    ...ownsOutbound ? [async () => { await outbound.destroy() }] : [],
    ...ownsStore ? [async () => { await store.close() }] : [],
    ...ownsStorage ? [async () => { await storage.close() }] : [],
  ]
  addLifecycle(app, { sources, egress, parts, closing: () => { closing = true }, owned })
  return {
    app, sources, outbound, egress, metrics, store, rotation, callers, restart, shared, ...featureControls(parts),
  }
}
