/**
 * What every listener's Fastify instance shares (the proxy's, the inbox's, the console's): pino as
 * its logger without Fastify's request lines (each listener writes lines of its own, without the
 * query string), no request id taken from a header, and no 503 of Fastify's while closing (the
 * refusal answers in the contract's shape).
 */
import { LogController, type FastifyBaseLogger } from 'fastify'
import type { Logger } from 'pino'

export interface AppOptions {
  loggerInstance: FastifyBaseLogger
  logController: LogController
  requestIdHeader: false
  return503OnClosing: false
}

export function appOptions (log: Logger): AppOptions {
  // Fastify infers its logger type from this option; pino's own type would leak into every route.
  const loggerInstance: FastifyBaseLogger = log
  return {
    loggerInstance,
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    return503OnClosing: false,
  }
}
