/**
 * The console's one error handler: every refusal and failure becomes one of the proxy's error codes
 * (errors.ts, the one place a code becomes a status) and is answered as a page a person can read,
 * with `x-proxy-error` for scripts and tests. Unknown errors tell the person nothing; the log gets them.
 */
import type {} from '@fastify/view'
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance } from 'fastify'
import {
  BadRequestError, BodyTooLargeError, ClientNotAllowedError, InternalError, ProxyError, RouteNotFoundError,
} from '../errors.js'

/** What a person is told, where the code's own message speaks to an API caller. */
const FOR_A_PERSON: Partial<Record<string, string>> = {
  APPROVAL_NOT_PERMITTED: 'You can read this console but not decide, replay or recheck: your email address is not in PROXY_CONSOLE_APPROVERS.',
  METHOD_NOT_ALLOWED: 'This address takes a form\'s POST only.',
  ROUTE_NOT_FOUND: 'There is no such page.',
  APPROVAL_NOT_FOUND: 'There is no such approval (or it was removed after its retention).',
  INTERNAL_ERROR: 'Something went wrong on the sidecar; the log says what.',
}

export function consoleError (err: FastifyError, bodyLimitBytes: number): ProxyError {
  if (err instanceof ProxyError) return err
  // @fastify/csrf-protection's own errors (FST_CSRF_MISSING_SECRET, FST_CSRF_INVALID_TOKEN).
  if (err.code?.startsWith('FST_CSRF_') === true) return new ClientNotAllowedError('This form does not carry this session\'s token (it may be from an older page, or another site). Reload the page and submit it again.')
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new BodyTooLargeError(bodyLimitBytes)
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new BadRequestError('the console takes forms (application/x-www-form-urlencoded) only')
  if (err.statusCode === 400) return new BadRequestError('the form could not be read')
  return new InternalError(err)
}

export const consoleErrors = fp(async function consoleErrors (
  app: FastifyInstance,
  options: { bodyLimitBytes: number },
) {
  app.setErrorHandler(async (err: FastifyError, request, reply) => {
    const error = consoleError(err, options.bodyLimitBytes)
    if (error.code === 'INTERNAL_ERROR') request.log.error({ err }, 'console request failed')
    else if (error.code === 'CLIENT_NOT_ALLOWED' && err.code?.startsWith('FST_CSRF_') === true) {
      request.log.warn({ email: request.person?.email ?? null, path: request.routeOptions.url }, 'console form refused: no valid CSRF token')
    }
    void reply.code(error.statusCode).header('x-proxy-error', error.code).header('cache-control', 'no-store')
    const message = FOR_A_PERSON[error.code] ?? error.message
    return await reply.view('error', { title: `${error.statusCode}`, message, status: error.statusCode, person: request.person, csrf: null, nav: null })
  })
  app.setNotFoundHandler(async () => { throw new RouteNotFoundError() })
}, { name: 'console-errors', dependencies: ['@fastify/view'] })
