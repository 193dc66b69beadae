/**
 * The proxy's Fastify instance: pino as its logger without per-request lines (request-audit.ts
 * writes one), Node's server with the slow-client bounds, and the one reading of every target
 * (SPEC §3), which the router and every later hook use.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import type { IncomingMessage } from 'node:http'
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import { appOptions } from '../http/app-options.js'
import { createClientErrorHandler, type AnswerObserver } from '../http/client-errors.js'
import { createNodeServer, type HttpEdgeSettings } from '../http/node-server.js'
import { requestIdFor } from '../routing/request-id.js'
import { createUrlRewriter } from '../routing/request-target.js'
import type { RouteSpec } from '../routing/route-table.js'
import '../routing/proxy-context.js'

export interface AppSettings {
  config: Config
  log: Logger
  httpEdges: HttpEdgeSettings
  routes: readonly RouteSpec[]
  /** Told of answers written before any route is known. */
  answered: AnswerObserver
  /** A feature's reading of a target that is not a proxied route (`/mcp`); undefined when none reads one. */
  target: ((req: IncomingMessage) => string | undefined) | undefined
}

export function createApp ({ config, log, httpEdges, routes, answered, target }: AppSettings): FastifyInstance {
  const app = Fastify({
    ...appOptions(log),
    genReqId: requestIdFor,
    bodyLimit: config.bodyLimitBytes,
    serverFactory: (handler) => createNodeServer(handler, log, httpEdges, answered),
    clientErrorHandler: createClientErrorHandler(log, httpEdges.linger, answered),
    rewriteUrl: createUrlRewriter(routes.map((route) => route.prefix), config.paths, target),
  })
  app.decorateRequest('proxy', null)
  app.decorateRequest('caller', null)
  app.decorateRequest('heldJson', null)
  return app
}
