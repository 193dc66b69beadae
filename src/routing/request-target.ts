/**
 * Where a proxied request goes, read once from its raw target as Fastify's `rewriteUrl`, so that the
 * router, the path guard, callers, idempotency, amount limits and forwarding all use the one reading
 * of canonical-path.ts. The route prefix is matched exactly, lower case and unencoded (SPEC §3);
 * only `<rest>` is canonicalised. Later hooks find the reading on the request, never in its URL.
 */
import type { FastifyRequest } from 'fastify'
import type { IncomingMessage } from 'node:http'
import { readRestPath, type CanonicalPath, type PathOptions, type PathProblem, type RestReading } from './canonical-path.js'
import type { RouteSpec } from './route-table.js'

export interface RequestTarget {
  route: RouteSpec
  /**
   * Canonical path below the interface base as sent (`/V1/payouts/`, or '' for the base itself), without query: what is
   * forwarded.
   */
  path: CanonicalPath
  /** `path` folded for comparisons (SPEC §3): every rule, limit and key judges this. */
  folded: CanonicalPath
  /** Raw query string as the client sent it, without '?': forwarded byte for byte. */
  query: string
  /** Why `<rest>` is refused; the path guard answers it after identity, and nothing else runs. */
  problem: PathProblem | null
}

/** The `config` of every route registered for a RouteSpec: how root-level hooks learn the route. */
export interface ProxyRouteConfig {
  route: RouteSpec
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set at onRequest for proxy routes; null for the proxy's own endpoints. */
    target: RequestTarget | null
    /**
     * Set to true in an onRequest hook by a feature that must read the body (amount limits,
     * idempotency): the route's body parser then holds it whole, within the body limit, as a Buffer.
     */
    holdBody: boolean
  }
}

export type TargetReading =
  | { kind: 'route', prefix: string, rest: RestReading, query: string }
  /** Not below a route prefix and plain: the proxy's own endpoints, or a 404. */
  | { kind: 'other', path: string, query: string }
  /** Refused before routing with 400 INVALID_PATH. */
  | { kind: 'refused', reason: string }

/**
 * The query string is forwarded byte for byte (SPEC §3), including the `[ ]` and `{ }` that qs and
 * axios write unencoded; only what could split or end the request line is refused.
 */
const QUERY = /^[\x21-\x22\x24-\x7e]*$/
/** Outside the routes only plain paths reach the router, which would otherwise decode them its own way. */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_-]+)*\/?$/
/**
 * SPEC §12's `/payments/<reference>`: a reference is any text a caller chose, so its one segment may
 * hold RFC 3986's path characters and percent-encodings; the router decodes it into the parameter.
 */
const REFERENCE_PATH = /^\/payments\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+$/
/** RFC 8615's well-known documents (SPEC §15's protected resource metadata): their one dot is fixed. */
const WELL_KNOWN_PATH = /^\/\.well-known\/[a-z0-9-]+(?:\/[A-Za-z0-9_-]+)*$/

export function readTarget (target: string, prefixes: readonly string[], options: PathOptions): TargetReading {
  if (target.charCodeAt(0) !== 47 /* / */) return { kind: 'refused', reason: 'the request target must be a path' }
  const q = target.indexOf('?')
  const path = q === -1 ? target : target.slice(0, q)
  const query = q === -1 ? '' : target.slice(q + 1)
  if (query !== '' && !QUERY.test(query)) return { kind: 'refused', reason: 'the query string contains characters that must be percent-encoded' }
  for (const prefix of prefixes) {
    if (path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === 47)) {
      return { kind: 'route', prefix, rest: readRestPath(path.slice(prefix.length), options), query }
    }
  }
  if (PLAIN_PATH.test(path) || REFERENCE_PATH.test(path) || WELL_KNOWN_PATH.test(path)) return { kind: 'other', path, query }
  // No route takes it; a traversal is still refused as one, anything else is a plain 404.
  const reading = readRestPath(path, { allowDots: false })
  if (!reading.ok && reading.problem.kind === 'traversal') return { kind: 'refused', reason: reading.problem.reason }
  return { kind: 'other', path: NO_ROUTE, query: '' }
}

/** A path no route is registered for: the not-found handler answers it. */
const NO_ROUTE = '/'

const kReading = Symbol('targetReading')
type ReadRequest = IncomingMessage & { [kReading]?: TargetReading }

/**
 * Fastify's `rewriteUrl`: keeps the reading on the raw request and gives the router its path.
 * `builtTarget` gives the target of a request a tool call built (SPEC §13), read here exactly as
 * built: the injected request's own URL went through a WHATWG parser, which resolves `..`.
 */
export function createUrlRewriter (
  prefixes: readonly string[],
  options: PathOptions,
  builtTarget?: (req: IncomingMessage) => string | undefined,
): (req: IncomingMessage) => string {
  return (req) => {
    const reading = readTarget(builtTarget?.(req) ?? req.url ?? '', prefixes, options)
    ;(req as ReadRequest)[kReading] = reading
    switch (reading.kind) {
      case 'refused': return NO_ROUTE
      case 'other': return reading.query === '' ? reading.path : `${reading.path}?${reading.query}`
      case 'route':
        // A refused <rest> still reaches its route, so that the refusal comes after identity (SPEC §3).
        if (!reading.rest.ok) return reading.prefix
        return reading.query === '' ? `${reading.prefix}${reading.rest.path}` : `${reading.prefix}${reading.rest.path}?${reading.query}`
    }
  }
}

export function readingOf (request: FastifyRequest): TargetReading | undefined {
  return (request.raw as ReadRequest)[kReading]
}

/** The request's target if it matched a proxy route, from the reading `rewriteUrl` made. */
export function resolveTarget (request: FastifyRequest): RequestTarget | null {
  const route = (request.routeOptions.config as Partial<ProxyRouteConfig>).route
  const reading = readingOf(request)
  if (route === undefined || reading?.kind !== 'route') return null
  const { rest, query } = reading
  if (rest.ok) return { route, path: rest.path, folded: rest.folded, query, problem: null }
  const none = '' as CanonicalPath
  return { route, path: none, folded: none, query, problem: rest.problem }
}
