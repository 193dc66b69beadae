/**
 * Who is asking (SPEC §14), once per request, before any page or form: the person of a session
 * cookie, or, from a peer in PROXY_CONSOLE_TRUSTED_PROXIES only, the person the sign-in proxy names
 * in PROXY_CONSOLE_USER_HEADER (the header from any other peer is ignored, and said at warn). A
 * person named by the header gets a session of their own the first time, as a link's does: the
 * session holds the CSRF secret @fastify/csrf-protection checks every form against (read as it
 * reads @fastify/session's, from `request.session._csrf`), so a token is good for one session only,
 * on every replica and after a restart.
 */
import type {} from '@fastify/cookie'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { BlockList } from 'node:net'
import type { Clock } from '../clock.js'
import { peerIn } from '../config/network-lists.js'
import { emailAddress, isApprover } from './approvers.js'
import { newSecret, secretHash, secretShaped, SESSION_TTL_MS } from './signin-secrets.js'
import type { SigninStore } from './signin-store.js'

export interface Person {
  email: string
  /** In PROXY_CONSOLE_APPROVERS: may decide, replay and recheck; everybody else reads. */
  approver: boolean
  /** The session's cookie hash, so that signing out ends it. */
  sessionHash: string
  via: 'link' | 'header'
}

declare module 'fastify' {
  interface FastifyRequest {
    person: Person | null
    /** Read by @fastify/csrf-protection (sessionPlugin '@fastify/session'): the session's CSRF secret. */
    session: { _csrf?: string }
  }
}

export interface IdentityOptions {
  signins: SigninStore
  clock: Clock
  approvers: readonly string[]
  trustedProxies: BlockList
  userHeader: string
  cookie: { name: string, secure: boolean }
}

export interface SessionStarter {
  /** Stores a new session for `email`, sets its cookie, and returns the person. */
  start: (reply: FastifyReply, email: string, via: Person['via']) => Promise<Person>
}

export const consoleIdentity = fp(async function consoleIdentity (app: FastifyInstance, options: IdentityOptions) {
  const { signins, clock, cookie } = options
  app.decorateRequest('person', null)
  // Set by the hook below on every request: an object per request, never one shared.
  app.decorateRequest('session', null as unknown as FastifyRequest['session'])

  const starter: SessionStarter = {
    async start (reply, email, via) {
      const secret = newSecret()
      const nowMs = clock.wallMs()
      const session = { email, csrfSecret: newSecret(), expiresAtMs: nowMs + SESSION_TTL_MS }
      const hash = secretHash(secret)
      await signins.addSession(hash, session, nowMs)
      reply.setCookie(cookie.name, secret, { path: '/', httpOnly: true, sameSite: 'strict', secure: cookie.secure, maxAge: SESSION_TTL_MS / 1000 })
      reply.request.session = { _csrf: session.csrfSecret }
      reply.log.info({ email, via }, 'console sign-in')
      const person = { email, approver: isApprover(options.approvers, email), sessionHash: hash, via }
      reply.request.person = person
      return person
    },
  }
  app.decorate('sessions', starter)

  /** Sets `request.person` and `request.session` (empty without a person: every form is then refused). */
  async function identify (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    request.session = {}
    const value = request.cookies[cookie.name]
    const hash = value !== undefined && secretShaped(value) ? secretHash(value) : null
    const stored = hash === null ? null : await signins.session(hash, clock.wallMs())
    const resume = (via: Person['via']): void => {
      if (stored === null || hash === null) return
      request.person = {
        email: stored.email,
        approver: isApprover(options.approvers, stored.email),
        sessionHash: hash,
        via,
      }
      request.session = { _csrf: stored.csrfSecret }
    }
    const named = request.headers[options.userHeader]
    if (named === undefined) return resume('link')
    const peer = request.raw.socket.remoteAddress ?? ''
    if (!peerIn(options.trustedProxies, peer)) {
      request.log.warn({ remoteAddress: peer, header: options.userHeader }, 'console sign-in header from a peer not in PROXY_CONSOLE_TRUSTED_PROXIES ignored')
      return resume('link')
    }
    const email = typeof named === 'string' ? emailAddress(named) : null
    if (email === null) {
      request.log.warn({ remoteAddress: peer, header: options.userHeader }, 'console sign-in header is not one email address: not signed in')
      return
    }
    // The proxy's person is the person: a session of someone else in this browser is not theirs.
    if (stored?.email === email) return resume('header')
    await starter.start(reply, email, 'header')
  }

  app.addHook('onRequest', identify)
}, { name: 'console-identity', dependencies: ['@fastify/cookie'] })

declare module 'fastify' {
  interface FastifyInstance {
    sessions: SessionStarter
  }
}
