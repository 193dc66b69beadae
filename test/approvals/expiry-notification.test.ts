/**
 * SPEC §11: an approval that expires is notified to PROXY_APPROVAL_NOTIFY_URL as
 * `{"type": "approval.expired", "approval": {...}}`, once, signed with PROXY_APPROVAL_SIGNING_SECRET
 * the Standard Webhooks way (verified with the standardwebhooks package, as an application would),
 * with the embedded store and with Redis. Time is the proxy's one clock seam: the fake clock starts
 * a TTL in the past and its wall clock steps over the TTL, so the expiry's notification is signed at
 * about the real time and the package's 5-minute timestamp tolerance accepts it.
 */
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { APPROVAL_LOOK_INTERVAL_MS } from '../../src/approvals/approval-worker.js'
import { DEFAULT_APPROVAL_TTL_S } from '../../src/config/schema.js'
import { eventually } from '../helpers/eventually.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { startRedis } from '../helpers/redis-server.js'
import { afterPasses, passesIn } from '../helpers/worker-passes.js'
import { startApp, type Delivery } from '../webhooks/inbox-harness.js'
import { SIGNING_SECRET, pay, payouts, startApprovalsRig, type HeldAnswer } from './approvals-harness.js'

const TTL_MS = DEFAULT_APPROVAL_TTL_S * 1000
const held = { amount: '300', currency: 'KES', externalReference: 'expiring-1', recipient: '+254700000077' }

interface Notification { type: string, approval: Record<string, unknown> }

const typeOf = (d: Delivery): string => (JSON.parse(d.body.toString('utf8')) as Notification).type

for (const kind of ['embedded', 'redis'] as const) {
  t.test(`${kind}: an expired approval is notified once, signed with the approval secret, with the approval object`, async (t) => {
    const receiver = await startApp(t)
    receiver.answer((_req, res) => { res.writeHead(204).end() })
    const clock = new FakeClock(Date.now() - TTL_MS)
    const redis = kind === 'redis' ? { PROXY_REDIS_URL: (await startRedis(t)).url } : {}
    const { provider, proxy } = await startApprovalsRig(t, { PROXY_APPROVAL_NOTIFY_URL: receiver.url, ...redis }, { clock })

    const first = await pay(proxy, held)
    t.equal(first.status, 202)
    const { approval } = await first.json() as HeldAnswer
    await eventually(() => receiver.deliveries.some((d) => typeOf(d) === 'approval.requested'), { what: 'the approval.requested notification' })

    clock.jumpWall(TTL_MS + 1000)
    await clock.advance(APPROVAL_LOOK_INTERVAL_MS)
    const expired = (): Delivery[] => receiver.deliveries.filter((d) => typeOf(d) === 'approval.expired')
    await eventually(() => expired().length === 1, { what: 'the approval.expired notification', timeoutMs: 5000 })

    const delivery = expired()[0] as Delivery
    const verified = new Webhook(SIGNING_SECRET).verify(delivery.body.toString('utf8'), delivery.headers as Record<string, string>) as Notification
    t.same(Object.keys(verified.approval).sort(), ['amount', 'caller', 'currency', 'environment', 'expiresAt', 'externalReference', 'id', 'interface', 'method', 'path', 'request', 'status'], 'the approval object, no decidedBy: nobody decided')
    t.match(verified, {
      type: 'approval.expired',
      approval: { id: approval.id, status: 'expired', caller: 'payout-agent', environment: 'sandbox', interface: 'fiat', method: 'POST', path: '/payouts', amount: '300', currency: 'KES', externalReference: 'expiring-1', expiresAt: approval.expiresAt, request: JSON.stringify(held) },
    })
    const requested = receiver.deliveries.find((d) => typeOf(d) === 'approval.requested')
    t.match(delivery.headers['webhook-id'], /^msg_/, "webhook-id is the notification's own id")
    t.not(delivery.headers['webhook-id'], requested?.headers['webhook-id'], 'another id than the approval.requested notification')
    t.match(delivery.headers['content-type'], /^application\/json/)

    // The worker looks again at every second of the clock: once both its loops have looked twice
    // more, the expired approval had its chance to be notified again and to be sent. Each
    // notification stored wakes the outbox's deliveries: every one stored has reached the receiver.
    const registry = proxy.metrics.registry
    await afterPasses([passesIn(registry, 'approvals'), passesIn(registry, 'approvals_forward')], { what: 'both approvals loops', between: async () => { await clock.advance(APPROVAL_LOOK_INTERVAL_MS) } })
    const stored = (): number => proxy.logs.find('approval notification stored').filter((r) => r['type'] === 'approval.expired').length
    await eventually(() => expired().length >= stored(), { what: 'every approval.expired notification stored delivered', timeoutMs: 5000 })
    t.equal(expired().length, 1, 'notified once')
    t.same(payouts(provider), [], 'never sent')
    await assertProxyError(t, await pay(proxy, held), 403, 'APPROVAL_EXPIRED', "the agent's retry")
    t.ok(proxy.logs.find('approval notification stored').some((r) => r['type'] === 'approval.expired' && r['approval'] === approval.id && r['level'] === 30), 'logged at info')
  })
}
