/**
 * SPEC §12 with §11: a request held for approval is followed once it is forwarded after the approval
 * (its caller is the agent that sent it, and the agent's retry replays the answer with its
 * Payment-Id); a held request that is rejected is never sent and creates nothing.
 */
import t from 'tap'
import { eventually } from '../helpers/eventually.js'
import { afterPasses, passesIn } from '../helpers/worker-passes.js'
import { AGENT_KEY, decide, pay, payouts, startApprovalsRig, type HeldAnswer } from '../approvals/approvals-harness.js'
import { paymentOf, SIGNING_SECRET } from './payments-harness.js'

t.test('held, approved, forwarded by the sidecar: followed as the agent\'s payment; rejected: nothing', async (t) => {
  const { provider, proxy } = await startApprovalsRig(t, { PROXY_PAYMENTS: 'on', PROXY_WEBHOOK_SIGNING_SECRET: SIGNING_SECRET, PROXY_PAYMENTS_NOTIFY_URL: 'http://127.0.0.1:9/notifications' })
  provider.transactions.configure({ settleAfterMs: 60_000 })
  const request = { amount: '300', currency: 'KES', externalReference: 'held-1' }
  const held = await pay(proxy, request)
  t.equal(held.status, 202)
  t.equal(held.headers.get('payment-id'), null, 'held: not followed, nothing sent')
  t.equal(await paymentOf(proxy.url, 'held-1', AGENT_KEY), null)
  const { approval } = await held.json() as HeldAnswer
  t.equal((await decide(proxy, approval.id, 'approve')).status, 200)
  await eventually(() => payouts(provider).length === 1, { what: 'the approved payout sent' })
  await eventually(async () => (await paymentOf(proxy.url, 'held-1', AGENT_KEY))?.state === 'pending', { what: 'followed' })
  const payment = await paymentOf(proxy.url, 'held-1', AGENT_KEY)
  const [transaction] = provider.transactions.list()
  t.match(payment, { caller: 'payout-agent', amount: '300', currency: 'KES', path: '/payouts', transactionId: transaction?.transactionId })
  const retry = await pay(proxy, request)
  t.equal(retry.headers.get('idempotent-replayed'), 'true')
  t.equal(retry.headers.get('payment-id'), payment?.id, 'the agent\'s retry replays the answer with its Payment-Id')

  const rejected = await pay(proxy, { ...request, amount: '150', externalReference: 'held-2' })
  const second = (await rejected.json() as HeldAnswer).approval
  t.equal((await decide(proxy, second.id, 'reject', { by: 'Ann', reason: 'no' })).status, 200)
  // Both approvals loops look every second (the forward loop sends what it finds approved): two more looks each had their chance to send it.
  await afterPasses([passesIn(proxy.metrics.registry, 'approvals'), passesIn(proxy.metrics.registry, 'approvals_forward')], { what: 'both approvals loops', between: async () => { proxy.shared.approvals?.nudge() } })
  t.equal(payouts(provider).length, 1, 'the rejected one is never sent')
  t.equal(await paymentOf(proxy.url, 'held-2', AGENT_KEY), null, 'and creates nothing')
  const all = await (await fetch(`${proxy.url}/payments`, { headers: { authorization: `Bearer ${AGENT_KEY}` } })).json() as { payments: unknown[] }
  t.equal(all.payments.length, 1)
})
