/**
 * The one place where any error raised while handling a request becomes one of our codes and is
 * answered in the contract shape (SPEC §5): `{"error":{"code","message"}}` with `x-proxy-error`.
 * Unknown errors tell the client nothing; the log gets them.
 */
import fp from 'fastify-plugin'
import type { IncomingMessage } from 'node:http'
import type { FastifyError, FastifyInstance } from 'fastify'
import {
  BadRequestError,
  BodyTooLargeError,
  CallerNotPermittedError,
  CallerUnauthenticatedError,
  ERROR_STATUS,
  InternalError,
  InvalidHeadersError,
  InvalidPathError,
  MethodNotAllowedError,
  ProxyError, RouteNotFoundError, upstreamErrorFrom,
} from '../errors.js'
import { PROXIED_METHODS } from '../routing/proxy-routes.js'
import { lingerAfterResponse, type LingerBounds } from './lingering-close.js'

const PLAIN_CHALLENGE = 'Bearer realm="payments-auth-proxy"'

export const errorReply = fp(async function errorReply (
  app: FastifyInstance,
  options: { bodyLimitBytes: number, linger: LingerBounds },
) {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (reply.raw.destroyed) {
      // The client went away (timeout, cancelled call): nothing to answer, nothing to fix.
      request.log.info({ code: (err as { code?: unknown }).code }, 'client went away')
      return
    }
    const error = toProxyError(err, options.bodyLimitBytes)
    // Token and shutdown refusals are expected states, already explained by their own log lines;
    // upstream failures are the provider's; only an unforeseen error is ours to fix.
    if (error.code === 'INTERNAL_ERROR') request.log.error({ err }, 'request failed')
    else if (error.code.startsWith('UPSTREAM_')) request.log.warn({ code: error.code, err: error.cause }, 'upstream request failed')
    else if (error.statusCode >= 500) request.log.warn({ code: error.code }, 'request refused')
    // Fastify's own refusal, with no line of ours elsewhere: what the client sent, bounded.
    else if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') request.log.warn({ code: error.code, contentType: String(request.headers['content-type']).slice(0, 200) }, 'Content-Type refused')
    reply.code(error.statusCode).header('x-proxy-error', error.code).header('cache-control', 'no-store')
    if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds))
    if (error.statusCode === ERROR_STATUS.BODY_TOO_LARGE || bodyUnread(request.raw)) {
      // Answered before the whole request was read (SPEC §5): the client must still receive it,
      // and what it goes on sending is not a next request (lingering-close.ts).
      reply.header('connection', 'close')
      lingerAfterResponse(request.raw.socket, options.linger)
    }
    if (error instanceof CallerUnauthenticatedError || error instanceof CallerNotPermittedError) {
      const challenge = error.challenge ?? (error instanceof CallerUnauthenticatedError ? PLAIN_CHALLENGE : undefined)
      if (challenge !== undefined) reply.header('www-authenticate', challenge)
    }
    return reply.send(error.toJSON())
  })

  app.setNotFoundHandler(async (request) => {
    if (!PROXIED_METHODS.includes(request.method)) throw new MethodNotAllowedError(request.method)
    throw new RouteNotFoundError()
  })
}, { name: 'error-reply' })

/** A request that declared a body the proxy has not read to its end. */
function bodyUnread (req: IncomingMessage): boolean {
  if (req.complete) return false
  const length = req.headers['content-length']
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

export function toProxyError (err: FastifyError, bodyLimit: number): ProxyError {
  if (err instanceof ProxyError) return err
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new BodyTooLargeError(bodyLimit)
  // Every route that takes a body reads any media type (a catch-all parser), so only an empty or
  // unparsable Content-Type gets this far (Fastify's 415): say what would have been taken.
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new InvalidHeadersError('Content-Type is empty or not a media type; send one such as application/json, or none')
  if (err.code === 'FST_ERR_BAD_URL') return new InvalidPathError('the URL is malformed')
  if (err.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') return new BadRequestError('Content-Length does not match the body')
  if (err.statusCode === 400) return new BadRequestError('the request could not be read')
  // An upstream stream that broke off before the first byte reached the client.
  if (typeof err.code === 'string' && (err.code.startsWith('UND_ERR_') || err.code === 'ECONNRESET')) return upstreamErrorFrom(err)
  return new InternalError(err)
}
