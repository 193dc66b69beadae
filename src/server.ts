/**
 * buildServer(config, deps) -> the whole proxy as a Fastify instance that never listens by
 * itself: cli.ts owns the process, tests build the real thing with injected clock and logger.
 * This module wires; the decisions live in the plugins it registers, in this order for every
 * proxied request: refusals (draining, a path outside the routes, headers) -> client access ->
 * [caller identity] -> path guard -> [caller rules, idempotency, approval retries, amount limits,
 * approval holds, payments' intent] -> the route (body, token) -> upstream. With PROXY_MCP=on, `/mcp` (SPEC §13) turns
 * each tool call into a request that meets this same order (mcp/inner-request.ts), marked first.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { IncomingMessage } from 'node:http'
import type { Logger } from 'pino'
import { createClientAccess } from './access/client-access.js'
import { clientAccessHook } from './access/client-access-hook.js'
import { ANONYMOUS_CALLER_ID } from './callers/caller.js'
import type { CallersHolder } from './callers/callers-holder.js'
import { amountLimitsPlugin } from './callers/amount-limits-plugin.js'
import { createCallerRefusals, type RefuseCaller } from './callers/caller-refusals.js'
import { callerIdentity, callerRules } from './callers/callers-plugin.js'
import { systemClock, type Clock } from './clock.js'
import type { Config, EnvironmentName } from './config/config.js'
import { createEgressReporter, type EgressReporter } from './egress/egress-reporter.js'
import { createIpNotAllowedDiagnosis } from './egress/ip-not-allowed.js'
import type { ProxyError } from './errors.js'
import { errorReply } from './http/error-reply.js'
import { createClientErrorHandler, type AnswerObserver } from './http/client-errors.js'
import { createNodeServer, DEFAULT_HTTP_EDGES, type HttpEdgeSettings } from './http/node-server.js'
import { requestRefusal } from './http/request-refusal.js'
import { idempotency, inFlightTtlMs } from './idempotency/idempotency-plugin.js'
import { createIdempotencyMetrics } from './idempotency/idempotency-metrics.js'
import { createResponseRecorder, DEFAULT_RECORD_BODY_BYTES } from './idempotency/response-recorder.js'
import { createCredentialRotation, type CredentialRotation } from './ops/credential-rotation.js'
import { healthRoutes, type WebhooksSection } from './ops/health-routes.js'
import { createRestartNotice, type RestartNotice } from './ops/restart-required.js'
import { createMetrics, METRIC_PREFIX, type ProxyMetrics } from './ops/metrics.js'
import { metricsRoute } from './ops/metrics-route.js'
import type { ProxyActivity } from './ops/proxy-activity.js'
import { requestAudit, type RequestAuditOptions } from './ops/request-audit.js'
import { createOutbound, type Outbound } from './outbound/outbound-agents.js'
import { pathGuard } from './routing/path-guard.js'
import { proxyRoutes } from './routing/proxy-routes.js'
import { requestIdFor } from './routing/request-id.js'
import { createUrlRewriter } from './routing/request-target.js'
import { buildRouteTable, type RouteSpec } from './routing/route-table.js'
import type { UpstreamResponseTap } from './routing/upstream-response.js'
import type { approvalHolds, approvalRetries } from './approvals/approvals-plugin.js'
import type { ApprovalsInUse } from './approvals/approvals-setup.js'
import type { ToolsHolder } from './mcp/tools-holder.js'
import type { Payments, RunningPayments } from './payments/payments-setup.js'
import { createStore } from './state/create-store.js'
import type { StateStore } from './state/state-store.js'
import { createStoreMetrics } from './state/store-metrics.js'
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
  /** Slow-client timeouts and lingering-close bounds; tests shorten them. */
  httpEdges?: HttpEdgeSettings
  /** The webhook inbox's `/readyz` section (SPEC §10), when the inbox is on; null while it starts. */
  webhooks?: (() => Promise<WebhooksSection | null>) | undefined
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
  /** Approvals in use (SPEC §11), null without: what the console (SPEC §14) decides with, its worker's nudge included. */
  approvals: ApprovalsHandle | null
  /** The MCP tools in force (SPEC §13), null with PROXY_MCP off; cli.ts reloads them as it reloads callers. */
  mcpTools: ToolsHolder | null
  /** Payments followed (SPEC §12), null when off; cli.ts hands them the inbox's events. */
  payments: RunningPayments | null
}

export interface ApprovalsHandle { store: ApprovalsInUse['store'], verifier: ApprovalsInUse['verifier'], metrics: ApprovalsInUse['metrics'], nudge: () => void }

export async function buildServer (config: Config, deps: ServerDeps): Promise<ProxyServer> {
  const clock = deps.clock ?? systemClock
  const log = deps.logger
  // First, so an invalid callers file stops the start before anything is opened. Imported only when
  // there is a file: its reader brings the YAML parser and TypeBox's checker, which a start without
  // callers need not load.
  let approvalsSetUp = false
  let callers: CallersHolder | null = null
  if (config.callers.file !== null) {
    const [{ createCallersHolder }, { approveAboveNeedsRestart }] = await Promise.all([import('./callers/callers-holder.js'), import('./approvals/approval-start-checks.js')])
    callers = createCallersHolder(config.callers.file, log, (specs) => approvalsSetUp ? [] : approveAboveNeedsRestart(specs))
  }
  // Approvals (SPEC §11), only when the callers file asks for them: their modules are loaded only with
  // a callers file, their plugins and store (a native module) only when a caller uses approveAbove.
  const setup = callers === null ? null : await import('./approvals/approvals-setup.js')
  const held = setup === null || callers === null ? null : await setup.prepareApprovals(config, callers.current(), log, clock)
  approvalsSetUp = held !== null
  const [approvalMetrics, approvalPlugins] = held === null
    ? [null, null]
    : await Promise.all([import('./approvals/approval-metrics.js'), import('./approvals/approvals-plugin.js')])
  // Agents over MCP (SPEC §13), loaded only when on: the SDK is a large module a proxy without it need not load.
  const mcp = config.mcp.enabled ? await import('./mcp/mcp-setup.js') : null
  const mcpTools = mcp === null ? null : mcp.prepareTools(config, { approvals: held !== null, payments: config.payments !== null }, log)
  const ownsOutbound = deps.outbound === undefined
  const outbound = deps.outbound ?? createOutbound(config)
  const fetchToken = deps.fetchToken ?? createTokenClient({
    dispatcher: outbound.tokens, clock, timeoutMs: config.token.timeoutS * 1000, maxLifetimeS: config.token.maxLifetimeS,
  })
  let sources = new Map<EnvironmentName, TokenSource>()
  const metrics = createMetrics(() => sources, clock)
  const approvals = held === null || approvalMetrics === null || setup === null ? null : setup.approvalsInUse(held, approvalMetrics.createApprovalMetrics(metrics.registry, METRIC_PREFIX), clock, log)
  // Payments (SPEC §12), loaded only when on: a start without them loads none of their modules.
  const payments = config.payments === null ? null : await (await import('./payments/payments-setup.js')).preparePayments({ ...config, payments: config.payments }, { log, clock, registry: metrics.registry })
  const ownsStore = deps.store === undefined
  const store = deps.store ?? await createStore(config, { clock, log, observer: createStoreMetrics(metrics.registry, METRIC_PREFIX) })
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
  const app = createApp(config, log, httpEdges, routes, answered, mcp?.toolCallTarget)
  await app.register(errorReply, { bodyLimitBytes: config.bodyLimitBytes, linger: httpEdges.linger })
  // First of every request's hooks, so that each line a tool call's request logs names the tool.
  if (mcp !== null) await app.register(mcp.markToolCalls)
  await app.register(requestRefusal, { isClosing: () => closing })
  await app.register(clientAccessHook, { access: createClientAccess(config) })
  const refuse = callers === null ? null : createCallerRefusals(metrics.registry, METRIC_PREFIX)
  const recorder = await registerTransactionChecks(app, config, { callers, refuse, store, clock, metrics, via: mcp?.viaOf, activity: deps.activity, approvals: approvals === null || approvalPlugins === null ? null : { inUse: approvals, ...approvalPlugins }, payments })
  await app.register(healthRoutes, { sources, egress, state: () => store.status(), rotation: rotation.status, restartRequired: restart.current, webhooks: deps.webhooks, payments: payments?.readiness })
  await app.register(metricsRoute, { registry: metrics.registry })
  await app.register(proxyRoutes, {
    routes,
    sources,
    dispatcher: outbound.upstream,
    bodyLimitBytes: config.bodyLimitBytes,
    observer: createIpNotAllowedDiagnosis(egress, (environment, iface) => { metrics.ipNotAllowed(environment, iface) }),
    referencePointer: config.idempotency.keyPointer,
    tap: payments === null ? recorder : payments.tap(recorder),
  })

  const approvalWorker = approvals === null || callers === null || setup === null
    ? null
    : await setup.registerApprovals(app, approvals, { config, callers: callers.current, access: createClientAccess(config), state: store, sources, dispatcher: outbound.upstream, log, inFlightTtlMs: inFlightTtlMs(config), recordTtlMs: config.idempotency.ttlS * 1000, follow: payments?.approvedSends ?? null })
  const followed = payments === null
    ? null
    : await payments.register(app, { callers: callers === null ? null : callers.current, access: createClientAccess(config), sources, dispatcher: outbound.upstream, state: store })
  if (mcp !== null && mcpTools !== null && callers !== null && refuse !== null) {
    await mcp.registerMcp(app, config, {
      tools: mcpTools, callers: callers.current, access: createClientAccess(config), refuse, approvals: approvals === null ? null : { store: approvals.store, verifier: approvals.verifier, clock }, registry: metrics.registry, metricPrefix: METRIC_PREFIX, log,
    })
  }

  app.addHook('onReady', async () => {
    for (const source of sources.values()) source.start()
    egress.start()
    approvalWorker?.start()
    followed?.start()
  })
  app.addHook('preClose', async () => {
    closing = true
    // The payments' worker stops first: it reads the inbox's store, which cli.ts closes beside this
    // server; requests still in flight record their answers through the payments' store until onClose.
    await followed?.close()
  })
  app.addHook('onClose', async () => {
    for (const source of sources.values()) source.close()
    egress.close()
    await approvalWorker?.close()
    await approvals?.store.close()
    await payments?.close()
    if (ownsOutbound) await outbound.destroy()
    if (ownsStore) await store.close()
  })

  const approvalsHandle = approvals === null || approvalWorker === null ? null : { store: approvals.store, verifier: approvals.verifier, metrics: approvals.metrics, nudge: approvalWorker.nudge }
  return { app, sources, outbound, egress, metrics, store, rotation, callers, restart, approvals: approvalsHandle, mcpTools, payments: followed }
}

function createApp (config: Config, log: Logger, httpEdges: HttpEdgeSettings, routes: readonly RouteSpec[], answered: AnswerObserver, toolCallTarget?: (req: IncomingMessage) => string | undefined): FastifyInstance {
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
    rewriteUrl: createUrlRewriter(routes.map((route) => route.prefix), config.paths, toolCallTarget),
  })
  app.decorateRequest('proxy', null)
  app.decorateRequest('caller', null)
  app.decorateRequest('heldJson', null)
  return app
}

/** Approvals in use, with their two plugins (loaded only then). */
interface ApprovalPlugins { inUse: ApprovalsInUse, approvalRetries: typeof approvalRetries, approvalHolds: typeof approvalHolds }

/**
 * SPEC §7–§8 in their order: callers' identity, the path guard (SPEC §3: after identity, before
 * any rule judges the path), callers' rules (allow, rate, reference), the audit line, then
 * idempotency, then a held request's retry (SPEC §11), then amount limits, so a replay, 409 or 422
 * costs no amount, then the hold of a request above approveAbove, then a followed payment's intent
 * (SPEC §12), so nothing refused or held is followed. Each is registered only when configured.
 * Returns the idempotency layer's recorder for the proxy routes, if it is on.
 */
async function registerTransactionChecks (
  app: FastifyInstance, config: Config,
  deps: { callers: CallersHolder | null, refuse: RefuseCaller | null, store: StateStore, clock: Clock, metrics: ProxyMetrics, via: RequestAuditOptions['via'], activity: RequestAuditOptions['activity'], approvals: ApprovalPlugins | null, payments: Payments | null },
): Promise<UpstreamResponseTap | undefined> {
  const { callers, refuse, store, clock, metrics, approvals, payments } = deps
  const callerOptions = callers === null || refuse === null
    ? null
    : { callers: callers.current, store, keyPointer: config.idempotency.keyPointer, refuse }
  if (callerOptions !== null) await app.register(callerIdentity, callerOptions)
  await app.register(pathGuard)
  if (callerOptions !== null) await app.register(callerRules, callerOptions)
  await app.register(requestAudit, { metrics, via: deps.via, activity: deps.activity })
  let recorder: UpstreamResponseTap | undefined
  if (config.idempotency.enabled) {
    const observer = createIdempotencyMetrics(metrics.registry, METRIC_PREFIX)
    await app.register(idempotency, { store, keyPointer: config.idempotency.keyPointer, inFlightTtlMs: inFlightTtlMs(config), observer })
    recorder = createResponseRecorder({ store, ttlMs: config.idempotency.ttlS * 1000, maxBodyBytes: DEFAULT_RECORD_BODY_BYTES, observer })
  }
  // Approvals (SPEC §11) around the amount step: a held request's retry costs no amount; a new one is held once reserved.
  const held = approvals?.inUse
  const approvalOptions = held === undefined ? null : { store: held.store, state: store, clock, ttlMs: held.ttlMs, keyPointer: config.idempotency.keyPointer, metrics: held.metrics, notifier: held.notifier, marks: held.marks, retentionMs: held.retentionMs, verifier: held.verifier }
  if (approvals !== null && approvalOptions !== null) await app.register(approvals.approvalRetries, approvalOptions)
  if (refuse !== null) await app.register(amountLimitsPlugin, { store, clock, refuse })
  if (approvals !== null && approvalOptions !== null) await app.register(approvals.approvalHolds, approvalOptions)
  await payments?.follow(app, config.idempotency.keyPointer)
  return recorder
}
