/**
 * One @fastify/http-proxy registration per forwarding route of the route table. Each lives in its
 * own scope with: the declared-length refusal, the body handling of request-body.ts, the token
 * lookup, and reply-from options that retry nothing but the single safe 401 retry of SPEC §5
 * (reply-from would otherwise retry a 503 ten times). Every route carries its RouteSpec as route
 * config, so root-level hooks (client access, callers, idempotency) know the target before these run.
 */
import httpProxy from '@fastify/http-proxy'
import type { FastifyReplyFromHooks } from '@fastify/reply-from'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Dispatcher } from 'undici'
import type { EnvironmentName } from '../config/config.js'
import {
  BodyTooLargeError, EnvironmentNotConfiguredError, upstreamErrorFrom,
} from '../errors.js'
import { buildClientResponseHeaders, buildUpstreamHeaders } from '../headers/header-policy.js'
import type { TokenSource } from '../tokens/token-source.js'
import type { ProxyContext } from './proxy-context.js'
import { continueIfExpected, declaredLength, holdBody, limitStream, shouldHoldBody } from './request-body.js'
import type { ProxyRouteConfig, RequestTarget } from './request-target.js'
import type { RouteSpec } from './route-table.js'
import { createUpstreamResponseHandler, type UpstreamResponseObserver, type UpstreamResponseTap } from './upstream-response.js'

/** TRACE would echo the injected token back; CONNECT would open a tunnel. Neither is proxied. */
export const PROXIED_METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS']

export interface ProxyRoutesOptions {
  routes: RouteSpec[]
  sources: ReadonlyMap<EnvironmentName, TokenSource>
  dispatcher: Dispatcher
  bodyLimitBytes: number
  observer: UpstreamResponseObserver
  /** Where a POST/PATCH body carries its reference: such a request may be retried after a 401 (SPEC §5). */
  referencePointer: string
  /** The idempotency layer's recorder (SPEC §8), when it is on. */
  tap?: UpstreamResponseTap
}

export async function proxyRoutes (app: FastifyInstance, options: ProxyRoutesOptions): Promise<void> {
  for (const route of options.routes) {
    await app.register(async (scope) => { registerRoute(scope, route, options) })
  }
}

/** A route's scope: the guard, then either the refusal of an unconfigured environment or the forwarding. */
function registerRoute (scope: FastifyInstance, route: RouteSpec, options: ProxyRoutesOptions): void {
  const config: ProxyRouteConfig = { route }
  guardRequests(scope, options.bodyLimitBytes)
  if (route.upstream === null || route.environment === null) {
    refuseUnconfigured(scope, route, config)
    return
  }
  const source = options.sources.get(route.environment)
  if (source === undefined) throw new Error(`no token source for ${route.environment}`)
  parseBodies(scope, options.bodyLimitBytes)
  forwardRequests(scope, route, route.upstream, source, config, options)
}

/** The declared length alone refuses a body before it is read (the path was judged by path-guard.ts). */
function guardRequests (scope: FastifyInstance, bodyLimitBytes: number): void {
  // Callback-style hooks: no promise per request on the hot path.
  scope.addHook('onRequest', (request, _reply, done) => {
    const length = declaredLength(request.raw)
    done(length !== null && length > bodyLimitBytes ? new BodyTooLargeError(bodyLimitBytes) : undefined)
  })
}

function refuseUnconfigured (scope: FastifyInstance, route: RouteSpec, config: ProxyRouteConfig): void {
  const problem = route.problem ?? 'not configured'
  // Refused in onRequest, before any body parser could answer first (415, 400).
  scope.addHook('onRequest', (_request, _reply, done) => { done(new EnvironmentNotConfiguredError(problem)) })
  const notConfigured = async (): Promise<never> => { throw new EnvironmentNotConfiguredError(problem) }
  scope.all(route.prefix, { config }, notConfigured)
  scope.all(`${route.prefix}/*`, { config }, notConfigured)
}

/** Every body is either held whole (idempotency, callers, a retry) or streamed within the limit. */
function parseBodies (scope: FastifyInstance, bodyLimitBytes: number): void {
  scope.removeAllContentTypeParsers()
  // Fastify caches the parser it finds for a media type, but not the catch-all: naming the type
  // the provider's API speaks spares a Content-Type parse on every JSON request.
  scope.addContentTypeParser(['application/json', '*'], (request, payload, done) => {
    // The body is wanted now: a client waiting on `Expect: 100-continue` may send it.
    continueIfExpected(request.raw)
    if (request.holdBody || shouldHoldBody(request.raw)) {
      holdBody(payload, bodyLimitBytes).then((body) => { done(null, body) }, done)
    } else {
      done(null, limitStream(payload, bodyLimitBytes))
    }
  })
}

/** The token lookup, the reply-from options built once for the route, and the http-proxy registration. */
function forwardRequests (scope: FastifyInstance, route: RouteSpec, upstream: NonNullable<RouteSpec['upstream']>, source: TokenSource, config: ProxyRouteConfig, options: ProxyRoutesOptions): void {
  const onResponse = createUpstreamResponseHandler({
    route,
    source,
    observer: options.observer,
    forward,
    referencePointer: options.referencePointer,
    tap: options.tap,
  })

  // Built once per route: a request only adds its held body, if any.
  const fromOptions = {
    rewriteRequestHeaders: (req, headers) => buildUpstreamHeaders(
      headers,
      (req.proxy as ProxyContext).token,
      String(req.id),
    ),
    rewriteHeaders: (headers) => buildClientResponseHeaders(headers),
    // The client's query string byte for byte (http-proxy would re-encode it).
    queryString: (_search, _url, req) => (req.proxy as ProxyContext).query,
    // No retries of our making but the 401 one: reply-from would otherwise retry a 503 GET ten times.
    retryDelay: () => null,
    // reply-from's types declare `res` as a ServerResponse; at run time it is undici's
    // { statusCode, headers, stream }, which is what the handler is typed against.
    onResponse: onResponse as unknown as NonNullable<FastifyReplyFromHooks['onResponse']>,
    onError: (reply, { error }) => { reply.send(upstreamErrorFrom(error)) },
  } satisfies FastifyReplyFromHooks

  function forward (request: FastifyRequest, reply: FastifyReply): void {
    const ctx = request.proxy as ProxyContext
    // Without a type reply-from would JSON-encode the Buffer; the provider's requests are JSON (SPEC §1).
    reply.from(ctx.upstreamPath, Buffer.isBuffer(ctx.body) ? withHeldBody(ctx.body, request.headers['content-type'] ?? 'application/json') : fromOptions)
  }

  // Written out rather than `{ ...fromOptions, body }`: Node 20's V8 spreads an object of closures
  // through its slow path, on every held request.
  // The return type requires every field of fromOptions, so a new one cannot be left out here.
  function withHeldBody (body: Buffer, contentType: string): typeof fromOptions & {
    body: Buffer
    contentType: string
  } {
    const { rewriteRequestHeaders, rewriteHeaders, queryString, retryDelay, onResponse, onError } = fromOptions
    return { rewriteRequestHeaders, rewriteHeaders, queryString, retryDelay, onResponse, onError, body, contentType }
  }

  void scope.register(httpProxy, {
    prefix: route.prefix,
    upstream: upstream.origin,
    undici: options.dispatcher,
    disableRequestLogging: true,
    proxyPayloads: false,
    httpMethods: PROXIED_METHODS,
    config,
    preHandler: (request, _reply, done) => {
      const attach = (token: string): void => {
        const { path, query } = request.target as RequestTarget
        request.proxy = {
          route,
          source,
          upstreamPath: `${upstream.basePath}${path}`,
          query,
          token,
          body: (request.body as ProxyContext['body'] | undefined) ?? null,
          attempt: 0,
          startedMs: performance.now(),
        }
        done()
      }
      const token = source.current()
      if (token !== null) attach(token)
      else source.get().then(attach, done)
    },
    handler: (request, reply) => { forward(request, reply) },
  })
}
