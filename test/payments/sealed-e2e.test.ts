/**
 * SPEC §12 "Sealed", from outside, as an attacker with write access to the store would try it: the
 * real SQLite file opened by another process (this one) and a record's JSON edited, or the real
 * Redis keys edited, while the built sidecar runs. Whatever is written, the application is never
 * notified `payment.succeeded` from it, `GET /payments` and `payments show` never say succeeded,
 * the record is read as `unverified` (logged at error, counted); when what names the payment and
 * its transaction id still verify, a look-up of that id settles it from the provider's answer only.
 */
import t, { type Test } from 'tap'
import { dirname, join } from 'node:path'
import { Redis } from 'ioredis'
import { openDatabase } from '../../src/sqlite/open-database.js'
import { runCli } from '../helpers/child-proxy.js'
import { eventually } from '../helpers/eventually.js'
import { startRedis } from '../helpers/redis-server.js'
import { afterPasses, passesAt } from '../helpers/worker-passes.js'
import { editStoredPayment, metric, notifications, payout, setting, startSidecar, storedNotifications, waitForState, type Sidecar } from './payments-harness.js'

// Kill, restart and flood cycles: a loaded 2-core machine needs more than tap's 60 s for the file.
t.setTimeout(300_000)

type Edit = (record: Record<string, unknown>) => Record<string, unknown>

const FAILED_VERIFICATION = 'payment record failed verification'
/** Settled by hand, with a notification due at once: what the worker would act on within a second. */
const settledByHand = (extra: Record<string, unknown> = {}): Edit => (r) => ({ ...r, state: 'succeeded', settledBy: 'lookup', settledAtMs: Date.now(), confirmed: true, notify: ['payment.succeeded'], dueAtMs: 0, ...extra })

interface Store {
  edit: (id: string, edit: Edit) => Promise<void>
  /** Rewrites the body of every notification waiting in the payments' outbox. */
  editNotifications: (edit: (body: string) => string) => Promise<number>
}

function sqliteStore (path: string): Store {
  return {
    async edit (id, edit) { await editStoredPayment(path, id, edit) },
    async editNotifications (edit) {
      const db = await openDatabase(join(dirname(path), 'payment-notifications.db'))
      try {
        const rows = db.prepare('SELECT id, body FROM events WHERE status = \'pending\'').all() as Array<{ id: string, body: Buffer }>
        for (const row of rows) db.prepare('UPDATE events SET body = ?, next_attempt_at = 0 WHERE id = ?').run(Buffer.from(edit(row.body.toString('utf8'))), row.id)
        return rows.length
      } finally {
        db.close()
      }
    },
  }
}

function redisStore (t: Test, url: string): Store {
  const client = new Redis(url, { lazyConnect: true })
  t.teardown(() => { client.disconnect() })
  const P = 'pap:pay:'
  return {
    async edit (id, edit) {
      const next = edit(JSON.parse(await client.hget(`${P}r:${id}`, 'json') as string) as Record<string, unknown>)
      await client.hset(`${P}r:${id}`, 'json', JSON.stringify(next), 'state', String(next['state']), 'n', String((next['notify'] as unknown[]).length), 'due', typeof next['dueAtMs'] === 'number' ? String(next['dueAtMs']) : '')
      if (typeof next['dueAtMs'] === 'number') await client.zadd(`${P}due`, next['dueAtMs'], id)
    },
    async editNotifications (edit) {
      const keys = await client.keys('pap:payn:wh:ev:*')
      for (const key of keys) await client.hset(key, 'body', edit(await client.hget(key, 'body') as string))
      return keys.length
    },
  }
}

async function payment (sidecar: Sidecar, reference: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${sidecar.url}/payments/${reference}`)
  return ((await res.json()) as { payment: Record<string, unknown> }).payment
}

async function shown (t: Test, env: Record<string, string | undefined>, reference: string): Promise<Record<string, unknown>> {
  const child = runCli(t, ['payments', 'show', reference], env)
  const { code } = await child.exited
  t.equal(code, 0, child.stderr())
  return JSON.parse(child.stdout()) as Record<string, unknown>
}

async function tampering (t: Test, backend: 'sqlite' | 'redis'): Promise<void> {
  const redis = backend === 'redis' ? await startRedis(t) : null
  const { provider, app, dir, env } = await setting(t, { PROXY_PAYMENTS_LOOKUP_SCHEDULE: '4s,60s', PROXY_WEBHOOK_RETRY_SCHEDULE: '2s,2s,2s,2s,2s', ...(redis === null ? {} : { PROXY_REDIS_URL: redis.url }) })
  /** Whether the payments' outbox holds a payment.succeeded for `id`: stored within the pass that made it, before it can be sent. */
  const succeededStored = async (id: string): Promise<boolean> => (await storedNotifications({ dir, env })).some((n) => n.key === `payment.succeeded:${id}`)
  const store = redis === null ? sqliteStore(join(dir, 'webhooks.db')) : redisStore(t, redis.url)
  const sidecar = await startSidecar(t, env)
  const pay = async (reference: string): Promise<{ id: string, transactionId: string }> => {
    const res = await payout(sidecar.url, { amount: 3, currency: 'KES', externalReference: reference })
    t.equal(res.status, 200)
    const { data } = await res.json() as { data: { transactionId: string } }
    return { id: String((await waitForState(sidecar.url, reference, 'pending')).id), transactionId: data.transactionId }
  }
  const flagged = async (count: number): Promise<void> => {
    await eventually(() => sidecar.child.stdout().split('\n').filter((l) => l.includes(FAILED_VERIFICATION)).length >= count, { what: `${count} logged at error`, timeoutMs: 30_000, detail: () => sidecar.child.stdout() })
  }

  await t.test('the amount and the state edited: unverified, nothing vouched, never notified, never settled', async (t) => {
    const { id } = await pay(`${backend}-amount`)
    await store.edit(id, settledByHand({ amount: '99999' }))
    await flagged(1)
    // The worker claimed it (due at once) and found it so: a notification, had it been believed, is
    // stored within that pass. Two more passes later, that pass is over and none is stored.
    await afterPasses(passesAt(sidecar.url, 'payments'), { what: 'the payments loop' })
    t.notOk(await succeededStored(id), 'no notification stored')
    t.same(notifications(app).filter((n) => n.type === 'payment.succeeded'), [], 'nothing notified')
    t.same(await payment(sidecar, `${backend}-amount`), {
      id, state: 'unverified', providerStatus: null, caller: null, environment: null, interface: null, method: null, path: null, externalReference: `${backend}-amount`,
      transactionId: null, amount: null, currency: null, createdAt: null, settledAt: null, settledBy: null, confirmed: false, events: null, lookups: null,
    }, 'GET /payments: its id and reference, null for all its seals cannot vouch for')
    t.match(await shown(t, env, `${backend}-amount`), { id, state: 'unverified', amount: null }, 'payments show')
    const line = sidecar.child.stdout().split('\n').find((l) => l.includes(FAILED_VERIFICATION)) ?? ''
    t.match(JSON.parse(line), { level: 50, payment: id, failed: 'created seal', vouched: 'nothing' })
    t.equal(await metric(sidecar.url, /^payments_auth_proxy_payments_unverified /), 1, 'counted')
  })

  await t.test('the state and the events edited: unverified, then sealed again from a look-up of its sealed transaction id, settled only by the provider', async (t) => {
    const { id, transactionId } = await pay(`${backend}-state`)
    await store.edit(id, settledByHand({ events: [{ id: 'msg_forged', status: 'successful', receivedAtMs: Date.now(), disputed: false }] }))
    await flagged(2)
    const again = await waitForState(sidecar.url, `${backend}-state`, 'pending', 30_000)
    t.match(again, { id, amount: '3', transactionId, settledBy: null, events: [], confirmed: false }, 'what the provider said: pending; the forged event is gone with the state it came in')
    t.same(notifications(app).filter((n) => n.type === 'payment.succeeded'), [], 'nothing notified')
    provider.transactions.setStatus(transactionId, 'successful')
    const settled = await waitForState(sidecar.url, `${backend}-state`, 'succeeded', 30_000)
    t.match(settled, { settledBy: 'lookup', amount: '3', confirmed: true })
    await eventually(() => notifications(app).some((n) => n.payment.externalReference === `${backend}-state`), { what: 'its notification' })
    t.match(notifications(app).filter((n) => n.payment.externalReference === `${backend}-state`), [{ type: 'payment.succeeded', payment: { amount: '3', confirmed: true } }], 'notified once, from the look-up')
    t.match(await shown(t, env, `${backend}-state`), { state: 'succeeded', amount: '3' })
  })

  await t.test('only the notification due edited onto a pending record: unverified, no notification', async (t) => {
    const { id } = await pay(`${backend}-notify`)
    await store.edit(id, (r) => ({ ...r, notify: ['payment.succeeded'], dueAtMs: 0 }))
    await flagged(3)
    await afterPasses(passesAt(sidecar.url, 'payments'), { what: 'the payments loop' })
    t.notOk(await succeededStored(id), 'no notification stored')
    t.same(notifications(app).filter((n) => n.payment.externalReference === `${backend}-notify`), [], 'nothing notified')
    t.match(await payment(sidecar, `${backend}-notify`), { state: /^(unverified|pending)$/ })
  })

  await t.test('a notification waiting in the outbox edited (failed into succeeded, another amount): never sent', async (t) => {
    app.answer((_req, res) => { res.writeHead(503).end() })
    const { transactionId } = await pay(`${backend}-queue`)
    provider.transactions.setStatus(transactionId, 'failed')
    await waitForState(sidecar.url, `${backend}-queue`, 'failed', 30_000)
    await eventually(() => notifications(app).some((n) => n.payment.externalReference === `${backend}-queue`), { what: 'the first attempt, answered 503' })
    t.ok(await store.editNotifications((body) => body.replace('"type":"payment.failed"', '"type":"payment.succeeded"').replace('"amount":"3"', '"amount":"99999"')) >= 1, 'edited')
    app.answer((_req, res) => { res.end('ok') })
    await eventually(() => sidecar.child.stdout().includes('notification failed verification: never sent'), { what: 'refused at its next attempt', timeoutMs: 30_000 })
    t.same(notifications(app).filter((n) => n.type === 'payment.succeeded' && n.payment.externalReference === `${backend}-queue`), [], 'the edited one never reached the application')
    t.match(await payment(sidecar, `${backend}-queue`), { state: 'failed', amount: '3' }, 'the payment is as the provider said')
  })
}

t.test('SQLite: the file edited by another process', async (t) => { await tampering(t, 'sqlite') })
t.test('Redis: the keys edited', async (t) => { await tampering(t, 'redis') })
