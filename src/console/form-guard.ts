/**
 * Every state change on the console is a form POST (SPEC §14), and each is checked in this order
 * before its handler runs: its `Origin` is the console's own (PROXY_CONSOLE_PUBLIC_URL; another or
 * none is 403), a person is signed in, the form carries this session's CSRF token
 * (@fastify/csrf-protection; 403 otherwise), and, for a decision, replay or recheck, the person is
 * an approver (403). A GET or HEAD on a form's action is 405 with `Allow: POST`: a link or an image
 * can never change anything.
 */
import type {} from '@fastify/csrf-protection'
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler, preHandlerHookHandler, RouteHandlerMethod } from 'fastify'
import { ApprovalNotPermittedError, ClientNotAllowedError, MethodNotAllowedError } from '../errors.js'

export interface FormOptions {
  /** Only approvers may post it (decide, replay, recheck); any signed-in person may sign out. */
  approversOnly: boolean
  /**
   * The sign-in form: no session yet, its secret is its token (SPEC §14); the Origin is checked all the same. Its GET
   * is the page.
   */
  signin?: boolean
}

/** The `Origin` check, on its own for the sign-in form. */
export function sameOrigin (origin: string) {
  return async function checkOrigin (request: FastifyRequest): Promise<void> {
    if (request.headers.origin === origin) return
    request.log.warn({ origin: request.headers.origin ?? null, email: request.person?.email ?? null, path: request.routeOptions.url }, 'console form refused: its Origin is not the console\'s')
    throw new ClientNotAllowedError('This form did not come from the console\'s own page (its Origin is not PROXY_CONSOLE_PUBLIC_URL). Open the console at its address and try again.')
  }
}

export function formRoute (
  app: FastifyInstance,
  origin: string,
  url: string,
  options: FormOptions,
  handler: RouteHandlerMethod,
): void {
  // Callback-style hooks (csrfProtection is one) beside async ones: Fastify runs each as it is written.
  const checks: Array<preHandlerHookHandler | preHandlerAsyncHookHandler> = [sameOrigin(origin)]
  if (options.signin !== true) {
    checks.push(async (request: FastifyRequest) => {
      if (request.person === null) throw new ClientNotAllowedError('Sign in first: this console changes nothing for a person it does not know.')
    })
    // Answers a missing or wrong token itself, with its own 403 error (console-errors.ts renders it).
    checks.push((request, reply, done) => { app.csrfProtection(request, reply, done) })
  }
  if (options.approversOnly) {
    checks.push(async (request: FastifyRequest) => {
      if (request.person?.approver === true) return
      request.log.warn({ email: request.person?.email ?? null, path: request.routeOptions.url }, 'console form refused: not in PROXY_CONSOLE_APPROVERS')
      throw new ApprovalNotPermittedError(request.person?.email ?? 'this person')
    })
  }
  app.post(url, { preHandler: checks }, handler)
  // The sign-in form's address is also its page.
  if (options.signin === true) return
  app.route({
    method: ['GET', 'HEAD'],
    url,
    handler: async (request, reply: FastifyReply) => {
      void reply.header('allow', 'POST')
      throw new MethodNotAllowedError(request.method)
    },
  })
}
