/**
 * buildConsole(settings, state, deps): the console (SPEC §14) as a third Fastify instance beside the
 * proxy's and the inbox's, never listening by itself (process/serve.ts does, only when PROXY_CONSOLE_LISTEN
 * is set, and imports this module only then). Server-rendered pages through @fastify/view and eta,
 * forms through @fastify/formbody, the session cookie through @fastify/cookie, CSRF tokens through
 * @fastify/csrf-protection; the Origin check, the allowed clients and the sign-in are its own.
 * Every request passes, in order: the allowed clients (403) -> who is asking (console-identity.ts)
 * -> the route; every form also form-guard.ts's checks.
 */
import cookie from '@fastify/cookie'
import csrfProtection from '@fastify/csrf-protection'
import formbody from '@fastify/formbody'
import view from '@fastify/view'
import { Eta } from 'eta'
import Fastify, { type FastifyInstance } from 'fastify'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { systemClock, type Clock } from '../clock.js'
import type { Config } from '../config/config.js'
import type { ConsoleConfig } from '../config/console-settings.js'
import { blockListOf, peerIn } from '../config/network-lists.js'
import { ClientNotAllowedError } from '../errors.js'
import { appOptions } from '../http/app-options.js'
import { createClientErrorHandler } from '../http/client-errors.js'
import { DEFAULT_LINGER, type LingerBounds } from '../http/lingering-close.js'
import { createListenerServer, LISTENER_TIMEOUTS, type ListenerTimeouts } from '../http/listener-server.js'
import { createStorage, type Storage } from '../storage/storage.js'
import { approvalPages } from './approval-pages.js'
import { consoleErrors } from './console-errors.js'
import type { ConsoleApprovals, ConsoleInbox, ConsolePayments, ConsoleStatus } from './console-deps.js'
import { consoleIdentity } from './console-identity.js'
import { eventPages } from './event-pages.js'
import { openSigninStore } from './open-signin-store.js'
import { signinRoutes } from './signin-routes.js'
import type { SigninStore } from './signin-store.js'
import { statusPage } from './status-page.js'
import { TEMPLATE_DIR } from './template-dir.js'

/** Forms are a few fields: a reason of 500 characters, a token, a sign-in code. */
const BODY_LIMIT_BYTES = 16 * 1024

/**
 * Scripts and styles only from the console itself (its one script and one stylesheet), no frames,
 * forms only to itself: a value the escaping missed could still run nothing.
 */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  // Not no-referrer: with it a browser sends `Origin: null` on the console's own forms (Fetch, "serializing a request
  // origin").
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
}

export interface ConsoleDeps {
  logger: Logger
  clock?: Clock
  /** Opened from the settings and `storage` (SQLite, or Redis with PROXY_REDIS_URL) when absent. */
  signins?: SigninStore
  /** The process's storage; a console of its own (a test's) makes one from `state`, closed with it. */
  storage?: Storage
  approvals: ConsoleApprovals | null
  inbox: ConsoleInbox | null
  /** SPEC §12's payments, when on: the page of stale and unknown payments is registered only then. */
  payments?: ConsolePayments | null
  status: ConsoleStatus
  linger?: LingerBounds
  timeouts?: ListenerTimeouts
}

export interface Console { app: FastifyInstance }

export async function buildConsole (settings: ConsoleConfig, state: Config['state'], deps: ConsoleDeps): Promise<Console> {
  const clock = deps.clock ?? systemClock
  const log = deps.logger.child({ component: 'console' })
  const storage = deps.storage ?? createStorage(state, 'sidecar')
  const signins = deps.signins ?? await openSigninStore(settings, storage, log)
  const linger = deps.linger ?? DEFAULT_LINGER
  // Sign-ins, decisions and refusals have lines of their own; request lines would carry paths with ids only.
  const app = Fastify({
    ...appOptions(log),
    bodyLimit: BODY_LIMIT_BYTES,
    serverFactory: (handler) => createListenerServer(handler, log, linger, deps.timeouts ?? LISTENER_TIMEOUTS),
    clientErrorHandler: createClientErrorHandler(log, linger, () => {}),
  })
  // Forms only: no JSON body reaches a route.
  app.removeAllContentTypeParsers()
  await app.register(formbody, { bodyLimit: BODY_LIMIT_BYTES })
  await app.register(cookie)
  await app.register(view, {
    engine: { eta: new Eta({ autoEscape: true }) },
    templates: TEMPLATE_DIR,
    // Compiled once and kept, not read again per request.
    production: true,
    defaultContext: { hasPayments: deps.payments !== undefined && deps.payments !== null },
  })
  await app.register(consoleErrors, { bodyLimitBytes: BODY_LIMIT_BYTES })

  const allowed = blockListOf(settings.allowedClients)
  app.addHook('onRequest', async (request, reply) => {
    void reply.headers(SECURITY_HEADERS)
    const peer = request.raw.socket.remoteAddress ?? ''
    if (peerIn(allowed, peer)) return
    request.log.warn({ remoteAddress: peer }, 'console request refused: the client is not in PROXY_CONSOLE_ALLOWED_CLIENTS')
    throw new ClientNotAllowedError('This address may not use the console (PROXY_CONSOLE_ALLOWED_CLIENTS).')
  })
  const cookieSettings = { name: settings.secureCookies ? '__Host-console-session' : 'console-session', secure: settings.secureCookies }
  await app.register(consoleIdentity, {
    signins,
    clock,
    approvers: settings.approvers,
    trustedProxies: blockListOf(settings.trustedProxies),
    userHeader: settings.userHeader,
    cookie: cookieSettings,
  })
  // The CSRF secret is the session's, kept with it in the store (console-identity.ts).
  await app.register(csrfProtection, { sessionPlugin: '@fastify/session' })

  app.get('/healthz', async () => ({ status: 'ok' }))
  for (const [file, type] of [['console.css', 'text/css; charset=utf-8'], ['console.js', 'text/javascript; charset=utf-8']] as const) {
    const text = readFileSync(join(TEMPLATE_DIR, file), 'utf8')
    app.get(`/${file}`, async (_request, reply) => await reply.type(type).header('cache-control', 'max-age=300').send(text))
  }
  const origin = settings.publicUrl
  await app.register(signinRoutes, { signins, clock, origin, cookie: cookieSettings })
  // Every page below needs a person: a browser without one is sent to the sign-in page.
  app.addHook('preHandler', async (request, reply) => {
    const open = ['/signin', '/healthz', '/console.css', '/console.js'].includes(request.routeOptions.url ?? '')
    if (open || request.person !== null || request.method === 'POST') return
    await reply.redirect('/signin', 303)
  })
  const { detailPointers } = settings
  await app.register(approvalPages, { approvals: deps.approvals, clock, origin, detailPointers })
  await app.register(eventPages, { inbox: deps.inbox, clock, origin })
  await app.register(statusPage, { status: deps.status, clock })
  if (deps.payments !== undefined && deps.payments !== null) {
    const { paymentPages } = await import('./payment-pages.js')
    await app.register(paymentPages, { payments: deps.payments, origin })
  }
  // The time the sidecar took for a page (docs/performance.md measures the pending page by it).
  app.addHook('onSend', async (_request, reply) => { void reply.header('server-timing', `app;dur=${reply.elapsedTime.toFixed(2)}`) })
  app.addHook('onClose', async () => {
    if (deps.signins === undefined) await signins.close()
    if (deps.storage === undefined) await storage.close()
  })
  return { app }
}
