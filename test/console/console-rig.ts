/**
 * The console tests' setting: the approvals rig (the fake provider, a proxy whose agent is held
 * above 100 KES, its approvals in a real SQLite file), optionally a webhook inbox and its
 * application, and the console on a free loopback port in front of them, with a client that keeps
 * its cookie and sends the console's Origin like a browser.
 */
import { join } from 'node:path'
import type { Test } from 'tap'
import type { Clock } from '../../src/clock.js'
import type { Env } from '../../src/load-config.js'
import type { ConsolePayments } from '../../src/console/console-deps.js'
import { buildConsole, type Console } from '../../src/console/console-server.js'
import { issueSigninLink } from '../../src/console/signin-secrets.js'
import type { SigninStore } from '../../src/console/signin-store.js'
import { createSqliteSigninStore } from '../../src/console/sqlite-signin-store.js'
import { captureLogger, type LogCapture } from '../helpers/harness.js'
import { freePort } from '../helpers/ports.js'
import { startApprovalsRig, type ApprovalsRig } from '../approvals/approvals-harness.js'
import { inboxEnv, startApp, startInbox, type App, type RunningInbox } from '../webhooks/inbox-harness.js'

export { freePort }

export const APPROVER = 'ann@example.com'
export const READER = 'rob@example.com'

export interface ConsoleRig extends ApprovalsRig {
  console: Console
  url: string
  signins: SigninStore
  logs: LogCapture
  inbox: RunningInbox | null
  app: App | null
}


export interface RigOptions { env?: Env, inbox?: boolean, clock?: Clock, payments?: ConsolePayments }

export async function startConsoleRig (t: Test, options: RigOptions = {}): Promise<ConsoleRig> {
  const port = await freePort()
  const rig = await startApprovalsRig(t, { PROXY_CONSOLE_LISTEN: `127.0.0.1:${port}`, PROXY_CONSOLE_APPROVERS: `${APPROVER},*@finance.example.com`, ...options.env })
  const settings = rig.proxy.config.console
  if (settings === null) throw new Error('the console is off')
  let inbox: RunningInbox | null = null
  let app: App | null = null
  if (options.inbox === true) {
    app = await startApp(t)
    inbox = await startInbox(t, inboxEnv(app.url, join(rig.dir, 'inbox.db'), { PROXY_WEBHOOK_RETRY_SCHEDULE: '50ms' }))
  }
  const signins = await createSqliteSigninStore(rig.storePath)
  t.teardown(() => signins.close())
  const { logger, logs } = captureLogger('trace')
  const built = await buildConsole(settings, rig.proxy.config.state, {
    logger,
    clock: options.clock,
    signins,
    approvals: rig.proxy.shared.approvals ?? null,
    inbox: inbox === null ? null : { store: inbox.store, wake: inbox.deliverer.wake },
    payments: options.payments ?? null,
    status: {
      tokens: () => [...rig.proxy.sources].map(([environment, source]) => ({ environment, ...source.status() })),
      egressIp: () => rig.proxy.egress.current(),
    },
  })
  t.teardown(() => built.app.close())
  await built.app.listen({ host: settings.listen.host, port: settings.listen.port })
  return { ...rig, console: built, url: settings.publicUrl, signins, logs, inbox, app }
}

export interface Answer { status: number, text: string, headers: Headers }

/** A browser's part over plain HTTP: its cookie, the console's Origin on every POST (unless told otherwise). */
export class ConsoleClient {
  cookie: string | null = null
  constructor (readonly url: string) {}

  async get (path: string, headers: Record<string, string> = {}): Promise<Answer> {
    return await this.send('GET', path, undefined, headers)
  }

  /** Posts a form; `origin: null` sends none. */
  async post (path: string, form: Record<string, string>, options: { origin?: string | null, headers?: Record<string, string> } = {}): Promise<Answer> {
    const origin = options.origin === undefined ? this.url : options.origin
    return await this.send('POST', path, new URLSearchParams(form).toString(), {
      'content-type': 'application/x-www-form-urlencoded', ...(origin === null ? {} : { origin }), ...options.headers,
    })
  }

  async send (method: string, path: string, body: string | undefined, headers: Record<string, string>): Promise<Answer> {
    const response = await fetch(`${this.url}${path}`, { method, body, redirect: 'manual', headers: { ...(this.cookie === null ? {} : { cookie: this.cookie }), ...headers } })
    const set = response.headers.getSetCookie()[0]
    if (set !== undefined) this.cookie = set.split(';')[0] ?? null
    return { status: response.status, text: await response.text(), headers: response.headers }
  }

  /** Signs in with a fresh link for `email`, as the sign-in page's script does. */
  async signIn (signins: SigninStore, email: string, nowMs = Date.now()): Promise<Answer> {
    const link = await issueSigninLink(signins, this.url, email, nowMs)
    return await this.post('/signin', { secret: link.slice(link.indexOf('#') + 1) })
  }
}

/** The CSRF token of the first form of a page. */
export function csrfOf (html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html)
  if (match?.[1] === undefined) throw new Error('no CSRF token on the page')
  return match[1]
}

/** Holds a payout of `amount` KES with `reference`, as the agent would; returns the approval id. */
export async function hold (rig: ApprovalsRig, amount: number, reference: string, extra: Record<string, unknown> = {}): Promise<string> {
  const { pay } = await import('../approvals/approvals-harness.js')
  const response = await pay(rig.proxy, { amount, currency: 'KES', externalReference: reference, ...extra })
  const body = await response.json() as { approval?: { id: string } }
  if (response.status !== 202 || body.approval === undefined) throw new Error(`not held: ${response.status} ${JSON.stringify(body)}`)
  return body.approval.id
}
