/**
 * Sign-in by link (SPEC §14). `console-link` prints `<public URL>/signin#<secret>`: the secret is in
 * the fragment, so no browser sends it in a request line or a Referer and no log sees it; the page's
 * few lines of script put it in the form and post it (without script the person pastes it). A
 * link signs in once, within 10 minutes; a second use is refused and logged at warn. A secret that
 * arrives in a query string instead has been in a URL that proxies and histories keep: it is
 * refused and spent. The sign-in form carries no CSRF token (the secret is one), but its Origin is
 * checked like every other form's.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import { BadRequestError, ClientNotAllowedError } from '../errors.js'
import { formRoute } from './form-guard.js'
import { renderPage } from './render.js'
import { secretHash, secretShaped } from './signin-secrets.js'
import type { SigninStore } from './signin-store.js'

export interface SigninOptions {
  signins: SigninStore
  clock: Clock
  origin: string
  cookie: { name: string, secure: boolean }
}

const REFUSED: Record<'used' | 'expired' | 'unknown', string> = {
  used: 'This sign-in link was used already: a link signs in once. Ask for a new one (payments-auth-proxy console-link --as <email>).',
  expired: 'This sign-in link is more than 10 minutes old. Ask for a new one (payments-auth-proxy console-link --as <email>).',
  unknown: 'This is not a sign-in code this console issued. Check you pasted all of it, or ask for a new link.',
}

export async function signinRoutes (app: FastifyInstance, options: SigninOptions): Promise<void> {
  const { signins, clock, origin, cookie } = options

  /** Spends every secret-shaped value of the query string; true when there was any query at all. */
  async function refuseQuery (request: FastifyRequest): Promise<void> {
    const query = request.query as Record<string, unknown>
    if (Object.keys(query).length === 0) return
    const values = Object.values(query).flat().filter((v): v is string => typeof v === 'string' && secretShaped(v))
    for (const value of values) await signins.useLink(secretHash(value), clock.wallMs())
    request.log.warn({ remoteAddress: request.raw.socket.remoteAddress, spent: values.length }, 'console sign-in secret in a query string refused (the link is spent: it has been in a URL)')
    throw new BadRequestError('the sign-in code belongs after # in the link, never in its query. If it came from a link, that link is spent now: ask for a new one')
  }

  app.get('/signin', async (request, reply) => {
    await refuseQuery(request)
    return await renderPage(request, reply, 'signin', { title: 'Sign in', nav: null, problem: null })
  })

  formRoute(app, origin, '/signin', { approversOnly: false, signin: true }, async (request, reply) => {
    await refuseQuery(request)
    const secret = (request.body as { secret?: unknown } | null)?.secret
    const text = typeof secret === 'string' ? secret.trim() : ''
    const outcome = secretShaped(text) ? await signins.useLink(secretHash(text), clock.wallMs()) : { kind: 'unknown' as const }
    if (outcome.kind === 'signed-in') {
      await app.sessions.start(reply, outcome.email, 'link')
      return await reply.redirect('/approvals', 303)
    }
    const email = outcome.kind === 'unknown' ? null : outcome.email
    if (outcome.kind === 'used') request.log.warn({ email, remoteAddress: request.raw.socket.remoteAddress }, 'console sign-in link used again: refused')
    else request.log.warn({ email, reason: outcome.kind, remoteAddress: request.raw.socket.remoteAddress }, 'console sign-in refused')
    return await refuse(request, reply, REFUSED[outcome.kind])
  })

  async function refuse (request: FastifyRequest, reply: FastifyReply, problem: string): Promise<string> {
    void reply.header('x-proxy-error', new ClientNotAllowedError(problem).code)
    return await renderPage(request, reply, 'signin', { title: 'Sign in', nav: null, problem }, 403)
  }

  formRoute(app, origin, '/signout', { approversOnly: false }, async (request, reply) => {
    if (request.person !== null) await signins.endSession(request.person.sessionHash)
    request.log.info({ email: request.person?.email }, 'console sign-out')
    void reply.clearCookie(cookie.name, { path: '/', httpOnly: true, sameSite: 'strict', secure: cookie.secure })
    return await reply.redirect('/signin', 303)
  })
}
