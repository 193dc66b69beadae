/**
 * buildServer(config, deps) -> the whole proxy as a Fastify instance that never listens by
 * itself: cli.ts owns the process, tests build the real thing with injected clock and logger.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify'
import { createServer, STATUS_CODES, type IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import type { Logger } from 'pino'
import type { Dispatcher } from 'undici'
import { createClientAccess } from './access/client-access.js'
import { systemClock, type Clock } from './clock.js'
import type { Config, EnvironmentName } from './config/config.js'
import {
  BodyTooLargeError, ERROR_STATUS, HeadersTooLargeError, InternalError, InvalidHeadersError, InvalidPathError, MethodNotAllowedError,
  ProxyError, RouteNotFoundError, ShuttingDownError, upstreamErrorFrom,
} from './errors.js'
import { requestHeaderProblem } from './headers/header-policy.js'
import { createDispatcher } from './outbound/dispatcher.js'
import { ALLOWLIST_HINT, createEgressReporter, type EgressReporter } from './egress/egress-reporter.js'
import { healthRoutes } from './ops/health-routes.js'
import { createAccessLog } from './ops/access-log.js'
import { createMetrics, type ProxyMetrics } from './ops/metrics.js'
import { metricsRoute } from './ops/metrics-route.js'
import { canonicalizeTarget } from './routing/canonical-path.js'
import { PROXIED_METHODS, proxyRoutes } from './routing/proxy-routes.js'
import { requestIdFor } from './routing/request-id.js'
import { buildRouteTable } from './routing/route-table.js'
import type { UpstreamResponseObserver } from './routing/upstream-response.js'
import { createTokenClient, type FetchToken } from './tokens/token-client.js'
import { TokenSource } from './tokens/token-source.js'
import './routing/proxy-context.js'

/** Slowloris defence: a client has this long to send its headers, and this long for the whole request. */
export const HEADERS_TIMEOUT_MS = 10_000
export const REQUEST_TIMEOUT_MS = 30_000
/** How often Node checks the two timeouts above (its default of 30 s lets a slow client linger). */
const CONNECTIONS_CHECK_INTERVAL_MS = 1_000
/** How long a refused CONNECT's socket stays open for a client that does not read the answer. */
const CONNECT_ANSWER_TIMEOUT_MS = 5_000

export interface ServerDeps {
  logger: Logger
  clock?: Clock
  dispatcher?: Dispatcher
  fetchToken?: FetchToken
  random?: () => number
}

export interface ProxyServer {
  app: FastifyInstance
  sources: ReadonlyMap<EnvironmentName, TokenSource>
  dispatcher: Dispatcher
  egress: EgressReporter
  metrics: ProxyMetrics
}

const kPathProblem = Symbol('pathProblem')
type MarkedRequest = IncomingMessage & { [kPathProblem]?: string }

/** Answered even while draining; /readyz is not, so orchestrators stop routing to us. */
const ALWAYS_ANSWERED = new Set(['/healthz', '/metrics'])

export async function buildServer (config: Config, deps: ServerDeps): Promise<ProxyServer> {
  const clock = deps.clock ?? systemClock
  const ownsDispatcher = deps.dispatcher === undefined
  const dispatcher = deps.dispatcher ?? createDispatcher(config)
  const fetchToken = deps.fetchToken ?? createTokenClient({
    dispatcher, clock, timeoutMs: config.token.timeoutS * 1000, maxLifetimeS: config.token.maxLifetimeS,
  })
  const sources = new Map<EnvironmentName, TokenSource>()
  const metrics = createMetrics(() => sources, clock)
  const egress = createEgressReporter({
    url: config.egress.url,
    intervalMs: config.egress.intervalS * 1000,
    expectedIps: config.egress.expectedIps,
    dispatcher,
    clock,
    log: deps.logger,
    onUpdate: (ip, expected) => { metrics.egressIp(ip, expected) },
  })
  const upstreamObserver: UpstreamResponseObserver = {
    ipNotAllowed (request, route) {
      metrics.ipNotAllowed(route.environment ?? '', route.interface)
      request.log.error({
        environment: route.environment,
        interface: route.interface,
        egressIp: egress.current(),
        hint: `the provider refused this proxy's address: ${ALLOWLIST_HINT}`,
      }, 'upstream answered IP_NOT_ALLOWED')
    },
  }
  for (const env of Object.values(config.environments)) {
    sources.set(env.name, new TokenSource({
      environment: env,
      fetchToken,
      clock,
      log: deps.logger,
      random: deps.random,
      observer: metrics.tokenObserver,
      settings: {
        refreshMarginMs: config.token.refreshMarginS * 1000,
        retryMinMs: config.token.retryMinS * 1000,
        retryMaxMs: config.token.retryMaxS * 1000,
      },
    }))
  }

  const accessLog = createAccessLog(deps.logger)
  let closing = false
  // Fastify infers its logger type from this option; pino's own type would leak into every route.
  const loggerInstance: FastifyBaseLogger = deps.logger
  const app = Fastify({
    loggerInstance,
    // One line per proxied request is logged by our onResponse hook (access-log.ts), without the query string.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: requestIdFor,
    return503OnClosing: false,
    bodyLimit: config.bodyLimitBytes,
    serverFactory: (handler) => createServer({
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
    }, handler).on('connect', (req: IncomingMessage, socket: Duplex) => { refuseConnect(req, socket, deps.logger) }),
    rewriteUrl (req) {
      const target = canonicalizeTarget(req.url ?? '')
      if (!target.ok) {
        (req as MarkedRequest)[kPathProblem] = target.reason
        return '/'
      }
      return target.query === '' ? target.path : `${target.path}?${target.query}`
    },
  })
  app.decorateRequest('proxy', null)

  /** Why a request is refused before routing matters, if it is. */
  function refusal (request: FastifyRequest): ProxyError | undefined {
    if (closing && !ALWAYS_ANSWERED.has(request.url.split('?', 1)[0] ?? '')) return new ShuttingDownError()
    const problem = (request.raw as MarkedRequest)[kPathProblem]
    if (problem !== undefined) {
      request.log.warn({ reason: problem }, 'request path refused')
      return new InvalidPathError(problem)
    }
    const headerProblem = requestHeaderProblem(request.raw.rawHeaders)
    if (headerProblem !== null) {
      request.log.warn({ reason: headerProblem.reason }, 'request headers refused')
      return headerProblem.status === 431 ? new HeadersTooLargeError(headerProblem.reason) : new InvalidHeadersError(headerProblem.reason)
    }
    return undefined
  }

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done(refusal(request))
  })

  app.addHook('onResponse', (request, reply, done) => {
    done()
    const ctx = request.proxy
    if (ctx === null) return
    metrics.requestCompleted(ctx.route.environment ?? '', ctx.route.interface, reply.statusCode, (performance.now() - ctx.startedMs) / 1000)
    accessLog({
      reqId: request.id,
      environment: ctx.route.environment,
      iface: ctx.route.interface,
      method: request.method,
      path: ctx.upstreamPath,
      status: reply.statusCode,
      retried: ctx.attempt > 0,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
    })
  })

  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (reply.raw.destroyed) {
      // The client went away (timeout, cancelled call): nothing to answer, nothing to fix.
      request.log.info({ code: (err as { code?: unknown }).code }, 'client went away')
      return
    }
    const error = toProxyError(err, config.bodyLimitBytes)
    // Token and shutdown refusals are expected states, already explained by their own log lines;
    // upstream failures are the provider's; only an unforeseen error is ours to fix.
    if (error.code === 'INTERNAL_ERROR') request.log.error({ err }, 'request failed')
    else if (error.code.startsWith('UPSTREAM_')) request.log.warn({ code: error.code, err: error.cause }, 'upstream request failed')
    else if (error.statusCode >= 500) request.log.warn({ code: error.code }, 'request refused')
    reply.code(error.statusCode).header('x-proxy-error', error.code).header('cache-control', 'no-store')
    if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds))
    if (error.statusCode === ERROR_STATUS.BODY_TOO_LARGE) reply.header('connection', 'close')
    return reply.send(error.toJSON())
  })

  app.setNotFoundHandler(async (request) => {
    if (!PROXIED_METHODS.includes(request.method)) throw new MethodNotAllowedError(request.method)
    throw new RouteNotFoundError()
  })

  await app.register(healthRoutes, { sources, egress })
  await app.register(metricsRoute, { registry: metrics.registry })
  await app.register(proxyRoutes, {
    routes: buildRouteTable(config),
    sources,
    access: createClientAccess(config),
    dispatcher,
    bodyLimitBytes: config.bodyLimitBytes,
    observer: upstreamObserver,
  })

  app.addHook('onReady', async () => {
    for (const source of sources.values()) source.start()
    egress.start()
  })
  app.addHook('preClose', async () => { closing = true })
  app.addHook('onClose', async () => {
    for (const source of sources.values()) source.close()
    egress.close()
    if (ownsDispatcher) await dispatcher.destroy()
  })

  return { app, sources, dispatcher, egress, metrics }
}

/** The one place where any error becomes one of our codes; unknown errors say nothing outside. */
function toProxyError (err: FastifyError, bodyLimit: number): ProxyError {
  if (err instanceof ProxyError) return err
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new BodyTooLargeError(bodyLimit)
  // Every media type has a parser here (the catch-all), so only an empty or unparsable one gets this far.
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new InvalidHeadersError('Content-Type is empty or not a media type')
  if (err.statusCode === 400) return new InvalidPathError('malformed request')
  // An upstream stream that broke off before the first byte reached the client.
  if (typeof err.code === 'string' && (err.code.startsWith('UND_ERR_') || err.code === 'ECONNRESET')) return upstreamErrorFrom(err)
  return new InternalError(err)
}

/**
 * CONNECT never reaches Fastify: Node hands it to 'connect' listeners, or without one closes the
 * socket with no answer at all. It gets the 405 TRACE gets (BAD_INPUTS: 4xx, no tunnel).
 */
function refuseConnect (req: IncomingMessage, socket: Duplex, log: Logger): void {
  // Node no longer tracks the socket it hands over: not its error listener, timeouts or
  // closeAllConnections(). So it is closed here, whole, once the answer is out (or after a few
  // seconds if the client does not read it), and whatever the client sends meanwhile is discarded.
  socket.on('error', () => {})
  socket.resume()
  const deadline = setTimeout(() => { socket.destroy() }, CONNECT_ANSWER_TIMEOUT_MS)
  deadline.unref()
  socket.once('close', () => { clearTimeout(deadline) })
  log.warn({ method: req.method, remoteAddress: req.socket.remoteAddress }, 'CONNECT refused: the proxy opens no tunnels')
  const error = new MethodNotAllowedError('CONNECT')
  const body = JSON.stringify(error.toJSON())
  socket.end(`HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\nx-proxy-error: ${error.code}\r\ncache-control: no-store\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, () => { socket.destroy() })
}
