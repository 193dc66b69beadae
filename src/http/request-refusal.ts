/**
 * Requests refused before routing matters: while draining (SPEC §5 shutdown), a target that no
 * route takes and that would traverse (request-target.ts, run as Fastify's rewriteUrl so the router
 * only ever sees canonical paths), and headers the header policy refuses. A refused path below a
 * route prefix is the path guard's, after identity. Also tags every answer with its id.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { BadRequestError, HeadersTooLargeError, InvalidHeadersError, InvalidPathError, ShuttingDownError, type ProxyError } from '../errors.js'
import { requestHeaderProblem } from '../headers/header-policy.js'
import { readingOf } from '../routing/request-target.js'

/** Answered even while draining; /readyz is not, so orchestrators stop routing to us. */
const ALWAYS_ANSWERED = new Set(['/healthz', '/metrics'])

export interface RequestRefusalOptions {
  isClosing: () => boolean
}

export const requestRefusal = fp(async function requestRefusal (app: FastifyInstance, options: RequestRefusalOptions) {
  function refusal (request: FastifyRequest): ProxyError | undefined {
    const reading = readingOf(request)
    if (options.isClosing() && !(reading?.kind === 'other' && ALWAYS_ANSWERED.has(reading.path))) return new ShuttingDownError()
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      request.log.warn({ remoteAddress: request.raw.socket.remoteAddress }, 'request without Host refused')
      return new BadRequestError('an HTTP/1.1 request needs a Host header')
    }
    if (reading?.kind === 'refused') {
      request.log.warn({ reason: reading.reason, remoteAddress: request.raw.socket.remoteAddress }, 'request path refused')
      return new InvalidPathError(reading.reason)
    }
    const headerProblem = requestHeaderProblem(request.raw.rawHeaders)
    if (headerProblem !== null) {
      request.log.warn({ reason: headerProblem.reason }, 'request headers refused')
      return headerProblem.status === 431
        ? new HeadersTooLargeError(headerProblem.reason)
        : new InvalidHeadersError(headerProblem.reason)
    }
    return undefined
  }

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done(refusal(request))
  })
}, { name: 'request-refusal' })
