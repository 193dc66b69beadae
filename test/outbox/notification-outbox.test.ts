/**
 * The notification outbox's API (outbox/notification-outbox.ts), as approvals use it and payments
 * will: a notification is stored once per type and key, delivered to its URL signed with its own
 * secret (verified with the standardwebhooks package, as a receiver would), one order key's in the
 * order told, and one stored while the receiver is down is delivered after a restart; on its own
 * SQLite file and in Redis under its own prefix, over real sockets.
 */
import t from 'tap'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { systemClock } from '../../src/clock.js'
import { openNotificationOutbox, type NotificationOutbox, type NotificationOutboxOptions } from '../../src/outbox/notification-outbox.js'
import { newSigningSecret } from '../../src/outbox/standard-webhooks.js'
import { eventually } from '../helpers/eventually.js'
import { captureLogger } from '../helpers/harness.js'
import { redisConnection, startRedis } from '../helpers/redis-server.js'
import { tempDir } from '../helpers/temp-dir.js'
import { startApp } from '../webhooks/inbox-harness.js'

/** Until the store takes writes (Redis still connecting), notify rejects, and its user tells it again. */
async function tell (outbox: NotificationOutbox, ...args: Parameters<NotificationOutbox['notify']>): Promise<{ id: string, stored: boolean }> {
  let told: { id: string, stored: boolean } | null = null
  await eventually(async () => {
    told = await outbox.notify(...args).catch(() => null)
    return told !== null
  }, { what: 'the store takes the notification' })
  return told ?? { id: '', stored: false }
}

for (const kind of ['sqlite', 'redis'] as const) {
  t.test(`${kind}: told twice, delivered once, signed with its own secret, in order per key, across a restart`, async (t) => {
    const receiver = await startApp(t)
    const secret = newSigningSecret()
    const store = kind === 'redis' ? { redis: redisConnection(t, (await startRedis(t)).url, 'test:'), keys: 'payn:' } : { path: join(tempDir(t), 'payment-notifications.db') }
    const { logger } = captureLogger()
    const options: NotificationOutboxOptions = { name: 'payments', url: receiver.url, signingSecrets: [secret], retryScheduleMs: [50], store, log: logger, clock: systemClock }
    const open = async (): Promise<NotificationOutbox> => {
      const outbox = await openNotificationOutbox(options)
      t.teardown(() => outbox.stop())
      outbox.start()
      return outbox
    }
    const outbox = await open()
    const payment = { id: 'pay_1', status: 'succeeded', amount: '10.00' }
    const first = await tell(outbox, 'payment.succeeded', 'pay_1', 'pay_1', { payment })
    t.match(first, { id: /^msg_/, stored: true })
    t.same(await outbox.notify('payment.succeeded', 'pay_1', 'pay_1', { payment }), { id: first.id, stored: false }, 'the same type and key again: not stored twice')
    await eventually(() => receiver.deliveries.length === 1, { what: 'the delivery' })
    const delivered = receiver.deliveries[0]
    const verified = new Webhook(secret).verify(delivered?.body.toString('utf8') ?? '', delivered?.headers as Record<string, string>)
    t.same(verified, { type: 'payment.succeeded', payment }, 'the body is the type and the payload, signed with the outbox\'s secret')
    t.equal(delivered?.headers['webhook-id'], first.id)
    t.throws(() => new Webhook(newSigningSecret()).verify(delivered?.body.toString('utf8') ?? '', delivered?.headers as Record<string, string>), 'another secret does not verify it')

    // The receiver refuses once: the key's next notification waits for the first.
    let refusals = 1
    receiver.answer((_req, res) => { res.statusCode = refusals-- > 0 ? 503 : 204; res.end() })
    await outbox.notify('payment.pending', 'pay_2', 'pay_2', { payment: { id: 'pay_2', status: 'pending' } })
    await outbox.notify('payment.failed', 'pay_2', 'pay_2', { payment: { id: 'pay_2', status: 'failed' } })
    const types = (): string[] => receiver.deliveries.slice(1).map((d) => (JSON.parse(d.body.toString('utf8')) as { type: string }).type)
    await eventually(() => types().length === 3, { what: 'both of pay_2, one retried' })
    t.same(types(), ['payment.pending', 'payment.pending', 'payment.failed'], 'in the order told, the second after the first was delivered')

    await outbox.stop()
    receiver.answer((_req, res) => { res.writeHead(204).end() })
    const before = receiver.deliveries.length
    // Told while no deliverer runs (a process that stored it and died): delivered once one starts.
    const unstarted = await openNotificationOutbox(options)
    const late = await tell(unstarted, 'payment.stale', 'pay_3', null, { payment: { id: 'pay_3' } })
    await unstarted.stop()
    t.equal(receiver.deliveries.length, before, 'nothing delivered while stopped')
    await open()
    await eventually(() => receiver.deliveries.some((d) => d.headers['webhook-id'] === late.id), { what: 'the notification stored while stopped, delivered after the restart' })
  })
}
