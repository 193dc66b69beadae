/**
 * Starts the real inbox for a test: configuration through loadConfig (as the CLI reads it), a
 * SQLite file in a temp dir, the inbox on 127.0.0.1 port 0, every log line captured, and an
 * application (a real HTTP server) that records what it is delivered and answers as told.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { once } from 'node:events'
import { join } from 'node:path'
import type { Test } from 'tap'
import type { Dispatcher } from 'undici'
import type { Config } from '../../src/config/config.js'
import { loadConfig, type Env } from '../../src/load-config.js'
import type { WebhookConfig } from '../../src/config/webhook-config.js'
import { DEFAULT_WEBHOOK_CONCURRENCY, DEFAULT_WEBHOOK_DELIVERY_TIMEOUT_S } from '../../src/config/schema.js'
import { createDeliveryAgent } from '../../src/outbox/delivery-agent.js'
import { buildInbox, type Inbox, type InboxDeps } from '../../src/webhooks/inbox-server.js'
import { runWebhooksCommand } from '../../src/webhooks/webhooks-command.js'
import { createStorage } from '../../src/storage/storage.js'
import type { Child } from '../helpers/child-proxy.js'
import { captureLogger, type LogCapture } from '../helpers/harness.js'
import { tempDir } from '../helpers/temp-dir.js'

export { tempDir }

export const PATH_TOKEN = 'wht_Xq3pL9vT2mK8rN4sB7dF1gH'
export const PREVIOUS_PATH_TOKEN = 'wht_prevA1b2C3d4E5f6G7h8I9j'
export const SIGNING_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
export const PREVIOUS_SIGNING_SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD'
export const VERIFY_SECRET = 'provider-dashboard-secret-7f3a9c'

export interface Delivery { headers: IncomingMessage['headers'], body: Buffer, atMs: number }

export interface App {
  url: string
  deliveries: Delivery[]
  /** How the application answers; default 200. */
  answer: (handler: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void) => void
}

export async function startApp (t: Test): Promise<App> {
  const deliveries: Delivery[] = []
  let handler: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void = (_req, res) => { res.end('ok') }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      deliveries.push({ headers: req.headers, body, atMs: Date.now() })
      handler(req, res, body)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no address')
  return { url: `http://127.0.0.1:${address.port}/payments/events`, deliveries, answer: (h) => { handler = h } }
}

/** Every variable an inbox needs; the provider's own are placeholders (the inbox never calls it). */
export function inboxEnv (deliverTo: string, storePath: string, overrides: Env = {}): Env {
  return {
    PAYMENTS_FIAT_BASE_URL: 'http://127.0.0.1:9/api/b2b',
    PAYMENTS_SANDBOX_API_KEY: 'HC_sandbox_key_for_tests',
    PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_sandbox_for_tests',
    PROXY_EGRESS_IP_URL: 'off',
    // Never the default 8080: another test's sidecar (or another run's, on one machine) may hold it.
    PROXY_PORT: '0',
    PROXY_WEBHOOK_LISTEN: '127.0.0.1:0',
    PROXY_WEBHOOK_PATH_TOKEN: PATH_TOKEN,
    PROXY_WEBHOOK_SIGNING_SECRET: SIGNING_SECRET,
    PROXY_WEBHOOK_DELIVER_TO: deliverTo,
    PROXY_WEBHOOK_STORE_PATH: storePath,
    ...overrides,
  }
}

export interface RunningInbox extends Inbox {
  url: string
  port: number
  intakeUrl: string
  settings: WebhookConfig
  state: Config['state']
  logs: LogCapture
}

export async function startInbox (t: Test, env: Env, deps: Partial<InboxDeps> = {}): Promise<RunningInbox> {
  const { config } = loadConfig(env)
  if (config.webhooks === null) throw new Error('the inbox is off in this environment')
  const { logger, logs } = captureLogger('trace')
  const inbox = await buildInbox(config.webhooks, config.state, { logger, ...deps })
  t.teardown(() => inbox.app.close())
  await inbox.app.listen({ host: '127.0.0.1', port: 0 })
  const address = inbox.app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no address')
  const url = `http://127.0.0.1:${address.port}`
  return { ...inbox, url, port: address.port, intakeUrl: `${url}/webhooks/${PATH_TOKEN}`, settings: config.webhooks, state: config.state, logs }
}

/** `payments-auth-proxy webhooks <args>` in this process, on the running inbox's store and settings. */
export async function webhooksCommand (inbox: RunningInbox, args: readonly string[]): Promise<{ code: number, out: string, err: string }> {
  let out = ''
  let err = ''
  // As the CLI runs it: a storage of its own, closed once the command is done.
  const storage = createStorage(inbox.state, 'webhooks')
  try {
    const code = await runWebhooksCommand(args, inbox.settings, { storage, log: captureLogger().logger }, {
      out: (text) => { out += text }, err: (text) => { err += text }, nowMs: () => Date.now(),
    })
    return { code, out, err }
  } finally {
    await storage.close()
  }
}

/**
 * The agent an inbox's deliveries build for themselves (outbox/delivery-agent.ts), given to the
 * inbox as its dispatcher so that the test sees the body of every attempt as it starts: an attempt
 * starts in the same turn as the look that claimed it, so once a look has ended (its pass counted,
 * test/helpers/worker-passes.ts) every attempt it claimed is in `started`, arrived or not.
 */
export function attemptsSeen (t: Test, settings: { deliveryTimeoutS?: number, concurrency?: number } = {}): { dispatcher: Dispatcher, started: string[] } {
  const started: string[] = []
  const agent = createDeliveryAgent((settings.deliveryTimeoutS ?? DEFAULT_WEBHOOK_DELIVERY_TIMEOUT_S) * 1000, settings.concurrency ?? DEFAULT_WEBHOOK_CONCURRENCY)
  t.teardown(() => agent.destroy())
  const dispatcher = agent.compose((dispatch) => (options, handler) => {
    started.push(Buffer.from(options.body as Buffer).toString('utf8'))
    return dispatch(options, handler)
  })
  return { dispatcher, started }
}

/** An inbox and an application it delivers to, in a fresh temp dir. */
export async function startInboxAndApp (t: Test, overrides: Env = {}, deps: Partial<InboxDeps> = {}): Promise<{ inbox: RunningInbox, app: App, dir: string }> {
  const app = await startApp(t)
  const dir = tempDir(t)
  const inbox = await startInbox(t, inboxEnv(app.url, join(dir, 'webhooks.db'), overrides), deps)
  return { inbox, app, dir }
}

export async function post (url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<{ status: number, headers: Headers, json: Record<string, unknown>, text: string, body: string }> {
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } })
  const text = await res.text()
  let json: Record<string, unknown>
  try { json = JSON.parse(text) as Record<string, unknown> } catch { json = {} }
  return { status: res.status, headers: res.headers, json, text, body: text }
}

/** The inbox port a built sidecar logged once its inbox is ready (a child of child-proxy.ts). */
export async function inboxPortOf (child: Child): Promise<number> {
  await child.waitFor(/webhook inbox ready to accept events/)
  const line = child.stdout().split('\n').find((l) => l.includes('webhook inbox ready to accept events')) ?? ''
  return (JSON.parse(line) as { port: number }).port
}
