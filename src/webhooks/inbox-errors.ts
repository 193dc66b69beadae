/**
 * The webhook listener's error answers: the proxy's contract shape (`{"error":{"code","message"}}`
 * and `x-proxy-error`), everything it does not serve 404 `ROUTE_NOT_FOUND` naming nothing, and a
 * 413 answered with the lingering close of SPEC §5 so the sender reads it.
 */
import type { FastifyError, FastifyInstance } from 'fastify'
import type { IncomingMessage } from 'node:http'
import { BadRequestError, InternalError, ProxyError, WebhookBodyTooLargeError, WebhookRouteNotFoundError } from '../errors.js'
import { lingerAfterResponse, type LingerBounds } from '../http/lingering-close.js'
import type { InboxObserver } from './inbox-metrics.js'

export function inboxErrors (
  app: FastifyInstance,
  options: { bodyLimitBytes: number, linger: LingerBounds, observer: InboxObserver },
): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (reply.raw.destroyed) return
    const error = inboxErrorOf(err, options.bodyLimitBytes)
    if (error.code === 'INTERNAL_ERROR') request.log.error({ err }, 'webhook request failed')
    if (error.code === 'BODY_TOO_LARGE') {
      request.log.warn({ code: error.code, source: request.webhookSource }, 'webhook refused')
      options.observer.received('too_large', null)
    }
    reply.code(error.statusCode).header('x-proxy-error', error.code).header('cache-control', 'no-store')
    if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds))
    if (bodyUnread(request.raw)) {
      reply.header('connection', 'close')
      lingerAfterResponse(request.raw.socket, options.linger)
    }
    return reply.send(error.toJSON())
  })
  app.setNotFoundHandler(async () => { throw new WebhookRouteNotFoundError() })
}

/** A request that declared a body not read to its end: what follows it on the socket is not a request. */
function bodyUnread (req: IncomingMessage): boolean {
  if (req.complete) return false
  const length = req.headers['content-length']
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

function inboxErrorOf (err: FastifyError, bodyLimitBytes: number): ProxyError {
  if (err instanceof ProxyError) return err
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new WebhookBodyTooLargeError(bodyLimitBytes)
  if (err.statusCode === 400 || err.code === 'FST_ERR_BAD_URL') return new BadRequestError('the request could not be read')
  return new InternalError(err)
}
