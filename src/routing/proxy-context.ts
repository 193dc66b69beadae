/** What one proxied request carries between the hooks of its route. */
import type { TokenSource } from '../tokens/token-source.js'
import type { ProxiedBody } from './request-body.js'
import type { RouteSpec } from './route-table.js'

export interface ProxyContext {
  route: RouteSpec
  source: TokenSource
  /** Upstream path (base path + canonical rest), without query. */
  upstreamPath: string
  /** Raw query string as the client sent it, without '?': forwarded byte for byte. */
  query: string
  token: string
  body: ProxiedBody | null
  attempt: number
  startedMs: number
}

declare module 'fastify' {
  interface FastifyRequest {
    proxy: ProxyContext | null
  }
}
