/**
 * The payments tests' setting (SPEC §12): the fake provider with its transactions on (payouts
 * answered `pending` with a transaction id, look-ups, statuses that settle on their own, events sent
 * with the dashboard's static secret), an application that records what it is delivered, and a
 * sidecar with payments and the inbox on, either the built process (`dist-bundle/cli.mjs`) or built
 * in this process (its logs captured). Short schedules through settings, never fake time.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { Webhook } from 'standardwebhooks'
import { keySha256 } from '../../src/callers/judge-caller.js'
import { loadConfig, type Env } from '../../src/load-config.js'
import { openDatabase } from '../../src/sqlite/open-database.js'
import type { FakeProvider, TransactionOptions } from '../../src/fake-provider/index.js'
import { pino } from 'pino'
import { Redis } from 'ioredis'
import { derivePaymentSealKey } from '../../src/payments/payment-seal.js'
import type { PaymentStore } from '../../src/payments/payment-store.js'
import type { SealedPaymentView as PaymentView } from '../../src/payments/payment-view.js'
import { sealedPaymentStore } from '../../src/payments/sealed-payment-store.js'
import { buildServer, type ProxyServer } from '../../src/server.js'
import { buildInbox, type Inbox } from '../../src/webhooks/inbox-server.js'
import { listeningPort, runCli, type Child } from '../helpers/child-proxy.js'
import { eventually, HANG_MS } from '../helpers/eventually.js'
import { captureLogger, providerEnv, startProvider, type LogCapture } from '../helpers/harness.js'
import { inboxPortOf, PATH_TOKEN, SIGNING_SECRET, startApp, type App } from '../webhooks/inbox-harness.js'

export { PATH_TOKEN, SIGNING_SECRET }
/** The provider's dashboard secret, sent as is in `x-webhook-signature` (SPEC §10's header-secret scheme). */
export const PROVIDER_SECRET = 'provider-dashboard-secret-payments-7f3a'
export const AGENT_A_KEY = 'pak_payments-agent-a-0123456789abcdefghijklmnopq'
export const AGENT_B_KEY = 'pak_payments-agent-b-0123456789abcdefghijklmnopq'
export const APPROVER_KEY = 'pak_payments-approver-0123456789abcdefghijklmnop'
/** Seals the payment records (SPEC §12 "Sealed"): a key of its own, held by no notification receiver. */
export const SEALING_SECRET = 'whsec_cGF5bWVudHMtc2VhbGluZy1rZXktb2YtdGhlLXRlc3Rz'

/** A store of the tests' own, behind the seals the sidecar keeps: what it writes, the sidecar reads as sealed. */
export function sealedForTests (store: PaymentStore): PaymentStore {
  return sealedPaymentStore(store, derivePaymentSealKey(SEALING_SECRET), pino({ level: 'silent' }))
}

/**
 * What an attacker with write access to the SQLite file does: opens it from another process (this
 * one) and rewrites a payment's JSON with the columns the worker's queries read.
 */
export async function editStoredPayment (path: string, id: string, edit: (record: Record<string, unknown>) => Record<string, unknown>): Promise<void> {
  const db = await openDatabase(path)
  try {
    const row = db.prepare('SELECT record FROM payments WHERE id = ?').get(id) as { record: string }
    const next = edit(JSON.parse(row.record) as Record<string, unknown>)
    db.prepare('UPDATE payments SET state = ?, due_at = ?, notify = ?, record = ? WHERE id = ?')
      .run(String(next['state']), next['dueAtMs'], (next['notify'] as unknown[]).length, JSON.stringify(next), id)
  } finally {
    db.close()
  }
}

export function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'pap-payments-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

export function callersFile (dir: string): string {
  const file = join(dir, 'callers.yaml')
  writeFileSync(file, `callers:
  - { id: agent-a, keySha256: ${keySha256(AGENT_A_KEY)}, allow: [{}] }
  - { id: agent-b, keySha256: ${keySha256(AGENT_B_KEY)}, allow: [{}] }
  - { id: treasurer, keySha256: ${keySha256(APPROVER_KEY)}, approver: true, allow: [] }
`)
  return file
}

export interface Setting { provider: FakeProvider, app: App, dir: string, env: Env }

/** The provider, the application and the variables of a sidecar with payments and the inbox on. */
export async function setting (t: Test, overrides: Env = {}, transactions: TransactionOptions = { settleAfterMs: 60_000 }): Promise<Setting> {
  const provider = await startProvider(t, { transactions })
  const app = await startApp(t)
  const dir = tempDir(t)
  const env = providerEnv(provider, {
    PROXY_PAYMENTS: 'on',
    PROXY_SEALING_SECRET: SEALING_SECRET,
    PROXY_PAYMENTS_LOOKUP_SCHEDULE: '30s,60s',
    PROXY_WEBHOOK_LISTEN: '127.0.0.1:0',
    PROXY_WEBHOOK_PATH_TOKEN: PATH_TOKEN,
    PROXY_WEBHOOK_SIGNING_SECRET: SIGNING_SECRET,
    PROXY_WEBHOOK_VERIFY_SECRET: PROVIDER_SECRET,
    PROXY_WEBHOOK_DELIVER_TO: app.url,
    PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db'),
    LOG_LEVEL: 'info',
    ...overrides,
  })
  return { provider, app, dir, env }
}

export interface Sidecar { child: Child, url: string, intakeUrl: string }

/** The built process; ready once its tokens, the state store and the inbox are. */
export async function startSidecar (t: Test, env: Env): Promise<Sidecar> {
  const child = runCli(t, [], env)
  const inboxPort = await inboxPortOf(child)
  const url = `http://127.0.0.1:${listeningPort(child)}`
  await eventually(async () => {
    const ready = await (await fetch(`${url}/readyz`)).json() as { ready: boolean, state?: { ready: boolean }, payments?: { ready: boolean } }
    return ready.ready && ready.state?.ready !== false && ready.payments?.ready === true
  }, { what: 'the sidecar ready', timeoutMs: HANG_MS, detail: () => child.stdout() + child.stderr() })
  return { child, url, intakeUrl: `http://127.0.0.1:${inboxPort}/webhooks/${PATH_TOKEN}` }
}

export async function kill (child: Child): Promise<void> {
  child.process.kill('SIGKILL')
  await child.exited
}

export interface InProcess { server: ProxyServer, inbox: Inbox, url: string, intakeUrl: string, logs: LogCapture }

/** The sidecar built in this process, as cli.ts builds it, its log lines captured. */
export async function startInProcess (t: Test, env: Env): Promise<InProcess> {
  const { config } = loadConfig(env)
  const { logger, logs } = captureLogger('info')
  const server = await buildServer(config, { logger })
  if (config.webhooks === null) throw new Error('the inbox is off')
  const payments = server.shared.payments?.running ?? null
  const inbox = await buildInbox(config.webhooks, config.state, { logger, registry: server.metrics.registry, onStored: payments?.wake })
  await payments?.readEvents(inbox.store)
  t.teardown(async () => { await server.app.close(); await inbox.app.close() })
  await server.app.listen({ host: '127.0.0.1', port: 0 })
  await inbox.app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app: { server: { address: () => unknown } }): number => (app.server.address() as { port: number }).port
  const url = `http://127.0.0.1:${port(server.app)}`
  await eventually(() => [...server.sources.values()].every((s) => s.status().ready) && server.store.status().ready, { what: 'tokens and the state store' })
  return { server, inbox, url, intakeUrl: `http://127.0.0.1:${port(inbox.app)}/webhooks/${PATH_TOKEN}`, logs }
}

export async function payout (url: string, body: Record<string, unknown>, key?: string, signal?: AbortSignal): Promise<Response> {
  return await fetch(`${url}/sandbox/fiat/v1/payouts`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) }, body: JSON.stringify(body), signal,
  })
}

export async function paymentOf (url: string, reference: string, key?: string): Promise<PaymentView | null> {
  const res = await fetch(`${url}/payments/${encodeURIComponent(reference)}`, { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } })
  if (res.status === 404) return null
  if (res.status !== 200) throw new Error(`GET /payments/${reference}: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { payment: PaymentView }).payment
}

export async function waitForState (url: string, reference: string, state: string, timeoutMs = 10_000, detail?: () => string): Promise<PaymentView> {
  let last: PaymentView | null = null
  await eventually(async () => (last = await paymentOf(url, reference))?.state === state, { what: `${reference} ${state}`, timeoutMs, detail: () => `${JSON.stringify(last)}\n${detail?.() ?? ''}` })
  return last as unknown as PaymentView
}

/** An event as the provider sends it, with its static secret. */
export async function providerEvent (intakeUrl: string, data: Record<string, unknown>): Promise<{ status: number, id: string }> {
  const res = await fetch(intakeUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-webhook-signature': PROVIDER_SECRET }, body: JSON.stringify({ event: 'payout.status.updated', data }) })
  return { status: res.status, id: ((await res.json()) as { id: string }).id }
}

export interface Notification { type: string, payment: PaymentView, webhookId: string }

/** The payment notifications the application received, each verified as the application would (standardwebhooks). */
export function notifications (app: App): Notification[] {
  const verifier = new Webhook(SIGNING_SECRET)
  return app.deliveries.flatMap((d) => {
    const text = d.body.toString('utf8')
    if (!text.startsWith('{"type":"payment.')) return []
    const verified = verifier.verify(text, d.headers as Record<string, string>) as { type: string, payment: PaymentView }
    return [{ ...verified, webhookId: String(d.headers['webhook-id']) }]
  })
}

/** A notification in the payments' outbox: its key (`<type>:<payment id>`) and status (`pending` until delivered or failed). */
export interface StoredNotification { key: string, status: string }

/**
 * What the payments' outbox holds, read as an operator would from outside the sidecar: its SQLite
 * file beside the store, or its keys in Redis (`setting.env.PROXY_REDIS_URL`). A notification is
 * stored before the pass that made it ends, and is no longer `pending` once the application has
 * answered its delivery: nothing pending is nothing on its way.
 */
export async function storedNotifications (setting: Pick<Setting, 'dir' | 'env'>): Promise<StoredNotification[]> {
  const redisUrl = setting.env['PROXY_REDIS_URL']
  if (redisUrl === undefined) {
    const db = await openDatabase(join(setting.dir, 'payment-notifications.db'))
    try {
      return db.prepare('SELECT key, status FROM events ORDER BY seq').all() as StoredNotification[]
    } finally {
      db.close()
    }
  }
  const client = new Redis(redisUrl, { lazyConnect: true })
  try {
    await client.connect()
    const keys = await client.keys('pap:payn:wh:ev:*')
    return await Promise.all(keys.map(async (k) => {
      const [key, status] = await client.hmget(k, 'key', 'status')
      return { key: key ?? '', status: status ?? '' }
    }))
  } finally {
    client.disconnect()
  }
}

/** Resolves once nothing stored in the payments' outbox is still pending: every notification stored has been delivered. */
export async function notificationsDelivered (setting: Pick<Setting, 'dir' | 'env'>): Promise<StoredNotification[]> {
  let stored: StoredNotification[] = []
  await eventually(async () => (stored = await storedNotifications(setting)).every((n) => n.status !== 'pending'), { what: 'every notification stored delivered', timeoutMs: HANG_MS, detail: () => JSON.stringify(stored) })
  return stored
}

export async function metric (url: string, line: RegExp): Promise<number | null> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const found = text.split('\n').find((l) => line.test(l))
  return found === undefined ? null : Number(found.split(' ').at(-1))
}
