/**
 * Where a proxied request goes, resolved once from the route it matched, so that every later hook
 * (client access, callers, idempotency, forwarding) judges the same canonical path and no two
 * modules split a URL their own way.
 */
import type { FastifyRequest } from 'fastify'
import { splitTarget } from './canonical-path.js'
import type { RouteSpec } from './route-table.js'

export interface RequestTarget {
  route: RouteSpec
  /** Canonical path below the interface base (`/payouts/1`, or '' for the base itself), without query. */
  path: string
  /** Raw query string as the client sent it, without '?': forwarded byte for byte. */
  query: string
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

/** The route a request matched, if it is a proxy route (the URL is already canonical: server.ts rewriteUrl). */
export function resolveTarget (request: FastifyRequest): RequestTarget | null {
  const route = (request.routeOptions.config as Partial<ProxyRouteConfig>).route
  if (route === undefined) return null
  const [path, query] = splitTarget(request.url)
  return { route, path: path.slice(route.prefix.length), query }
}
