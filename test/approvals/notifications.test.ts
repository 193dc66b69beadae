/**
 * SPEC §11 notifications over real sockets: `approval.requested` when a request is held and
 * `approval.approved` / `.rejected` when decided, delivered by the inbox's deliverer to
 * PROXY_APPROVAL_NOTIFY_URL, signed with PROXY_APPROVAL_SIGNING_SECRET (verified with the
 * standardwebhooks package), retried after a failed attempt; a receiver that replays one to the
 * application's webhook endpoint is refused there, since another secret signs payment events.
 */
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { newSigningSecret } from '../../src/outbox/standard-webhooks.js'
import { eventually } from '../helpers/eventually.js'
import { startApp } from '../webhooks/inbox-harness.js'
import { SIGNING_SECRET, decide, pay, startApprovalsRig, type HeldAnswer } from './approvals-harness.js'

interface Notification { type: string, approval: { id: string, status: string, decidedBy?: string } }

t.test('held and decided approvals are notified, signed with the approval secret, retried after a failure', async (t) => {
  const receiver = await startApp(t)
  let failures = 1
  receiver.answer((_req, res) => {
    // The first attempt fails: the notification is retried on the schedule.
    res.statusCode = failures-- > 0 ? 503 : 204
    res.end()
  })
  const { proxy } = await startApprovalsRig(t, { PROXY_APPROVAL_NOTIFY_URL: receiver.url, PROXY_WEBHOOK_RETRY_SCHEDULE: '50ms' })
  const { approval } = await (await pay(proxy, { amount: '300', currency: 'KES', externalReference: 'n-1' })).json() as HeldAnswer
  const second = await (await pay(proxy, { amount: '150', currency: 'KES', externalReference: 'n-2' })).json() as HeldAnswer
  t.equal((await decide(proxy, approval.id, 'approve', { by: 'Ann' })).status, 200)
  t.equal((await decide(proxy, second.approval.id, 'reject', { by: 'Bob', reason: 'no' })).status, 200)

  const verifier = new Webhook(SIGNING_SECRET)
  const delivered = (): Notification[] => receiver.deliveries
    .filter((d) => d.headers['webhook-id'] !== undefined)
    .map((d) => verifier.verify(d.body.toString('utf8'), d.headers as Record<string, string>) as Notification)
  await eventually(() => new Set(delivered().map((n) => `${n.type} ${n.approval.id}`)).size === 4, { what: 'four notifications', timeoutMs: 10_000 })
  const kinds = [...new Set(delivered().map((n) => `${n.type} ${n.approval.id === approval.id ? 'first' : 'second'}`))].sort()
  t.same(kinds, ['approval.approved first', 'approval.rejected second', 'approval.requested first', 'approval.requested second'])
  t.match(delivered().find((n) => n.type === 'approval.approved'), { approval: { id: approval.id, status: 'approved', decidedBy: 'Ann' } })
  t.ok(receiver.deliveries.length >= 5, 'the failed attempt was retried')

  const applicationVerifier = new Webhook(newSigningSecret())
  const first = receiver.deliveries[0]
  t.throws(() => applicationVerifier.verify(first?.body.toString('utf8') ?? '', first?.headers as Record<string, string>), 'replayed to the application, a notification fails its verification')
  t.ok(proxy.logs.find('approval notification stored').every((r) => r['level'] === 30), 'logged at info')
  const metrics = await (await fetch(`${proxy.url}/metrics`)).text()
  t.match(metrics, /approvals_total\{caller="payout-agent",outcome="notified"\} 4/, 'each notification counted once')
})
