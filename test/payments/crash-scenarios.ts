/**
 * SPEC §12 crash safety on the real built process, as scenarios that crash-safety.test.ts runs with
 * the embedded store and crash-safety-redis.test.ts with Redis (one file each, within the runner's
 * per-file timeout): killed with SIGKILL right after a payout was forwarded (its answer outstanding)
 * and right after an event was answered 200, the sidecar loses nothing after a restart on the same
 * store: the forwarded payout is `unknown` (never missing) and the application's retry joins it;
 * the event reaches its payment, and a look-up in flight at the kill is made again.
 *
 * With Redis a killed process's §8 in-flight mark and its `sending` record outlive it for the
 * claim's lifetime (a replica cannot tell a dead sender from a slow one), so both processes get
 * short token and upstream timeouts, of which that lifetime is made; with the embedded store the
 * restarted sidecar knows at once that the file was its alone.
 */
import type { Test } from 'tap'
import { eventually } from '../helpers/eventually.js'
import { startRedis } from '../helpers/redis-server.js'
import { afterPasses, passesAt } from '../helpers/worker-passes.js'
import { kill, notifications, notificationsDelivered, payout, paymentOf, providerEvent, setting, startSidecar, waitForState, type Setting } from './payments-harness.js'

export type Kind = 'embedded' | 'redis'

/** The claim's lifetime is (token + 2 × upstream) timeouts + 5 s: 10 s here. */
const SHORT_TIMEOUTS = { PROXY_TOKEN_TIMEOUT_SECONDS: '1', PROXY_UPSTREAM_TIMEOUT_SECONDS: '2' }

async function crashSetting (t: Test, kind: Kind): Promise<Setting> {
  const redis = kind === 'redis' ? { PROXY_REDIS_URL: (await startRedis(t)).url, ...SHORT_TIMEOUTS } : {}
  return await setting(t, redis)
}

export function crashScenarios (t: Test, kind: Kind): void {
  t.test(`${kind}: killed right after forwarding: the payout is unknown after the restart, never missing, and the retry joins it`, async (t) => {
    const { provider, env } = await crashSetting(t, kind)
    let hang = true
    provider.setUpstreamHandler((req) => req.method === 'POST' && hang)
    const first = await startSidecar(t, env)
    const request = { amount: 400, currency: 'KES', externalReference: `crash-forward-${kind}` }
    const sent = payout(first.url, request).catch(() => null)
    await eventually(() => provider.upstreamRequests.some((r) => r.method === 'POST'), { what: 'the payout forwarded' })
    await kill(first.child)
    await sent
    hang = false

    const second = await startSidecar(t, env)
    const unknown = await waitForState(second.url, request.externalReference, 'unknown', 20_000, () => second.child.stdout())
    t.match(unknown, { transactionId: null, amount: '400', currency: 'KES' })
    // With Redis, a 409 until the killed process's in-flight mark expires.
    await eventually(async () => (await payout(second.url, request)).status === 200, { what: 'the retry forwarded once the killed process\'s claim is over', timeoutMs: 20_000 })
    const joined = await waitForState(second.url, request.externalReference, 'pending')
    t.equal(joined.id, unknown.id, 'the same payment')
    t.match(joined.transactionId, /^txn_/)
    const listed = await (await fetch(`${second.url}/payments`)).json() as { payments: unknown[] }
    t.equal(listed.payments.length, 1, 'one payment')
    t.match(second.child.stdout(), new RegExp(`"payment":"${unknown.id}"[^\\n]*"msg":"payment unknown`), 'logged as unknown')
  })

  t.test(`${kind}: killed right after an event was answered 200, and with its look-up in flight: after the restart the payment learns of it and settles once`, async (t) => {
    const setup = await crashSetting(t, kind)
    const { provider, app, env } = setup
    let hangLookups = true
    provider.setUpstreamHandler((req) => req.method === 'GET' && req.url?.includes('/transactions/') === true && hangLookups)
    const first = await startSidecar(t, env)
    const reference = `crash-event-${kind}`
    const { data } = await (await payout(first.url, { amount: 12, currency: 'KES', externalReference: reference })).json() as { data: { transactionId: string } }
    provider.transactions.setStatus(data.transactionId, 'successful')
    const event = await providerEvent(first.intakeUrl, { transactionId: data.transactionId, externalReference: reference, status: 'successful' })
    t.equal(event.status, 200)
    await eventually(() => provider.upstreamRequests.some((r) => r.method === 'GET' && r.url.includes(data.transactionId)), { what: 'the confirming look-up in flight' })
    await kill(first.child)
    hangLookups = false

    const second = await startSidecar(t, env)
    const settled = await waitForState(second.url, reference, 'succeeded', 20_000, () => second.child.stdout())
    t.match(settled, { settledBy: 'event', events: [{ id: event.id, status: 'successful', disputed: false }] })
    await eventually(() => notifications(app).length >= 1, { what: 'payment.succeeded', timeoutMs: 10_000 })
    // The payments loop had its chance to store another (two more passes), and every one stored has been delivered.
    await afterPasses(passesAt(second.url, 'payments'), { what: 'the payments loop' })
    t.same((await notificationsDelivered(setup)).map((n) => n.key), [`payment.succeeded:${settled.id}`], 'one notification stored')
    t.same(notifications(app).map((n) => n.type), ['payment.succeeded'], 'notified once')
  })

  t.test(`${kind}: killed the moment an event was answered 200: after the restart the payment has it`, async (t) => {
    const { env } = await crashSetting(t, kind)
    const first = await startSidecar(t, env)
    const reference = `crash-event-now-${kind}`
    const { data } = await (await payout(first.url, { amount: 13, currency: 'KES', externalReference: reference })).json() as { data: { transactionId: string } }
    const event = await providerEvent(first.intakeUrl, { transactionId: data.transactionId, externalReference: reference, status: 'processing' })
    await kill(first.child)
    t.equal(event.status, 200)
    const second = await startSidecar(t, env)
    await eventually(async () => (await paymentOf(second.url, reference))?.events.some((e) => e.id === event.id) === true, { what: 'the event on its payment', timeoutMs: 10_000, detail: () => second.child.stdout() })
    // Its status is the event's until a look-up answers (a loaded machine may have made one by now): not asserted.
    t.match(await paymentOf(second.url, reference), { state: 'pending', events: [{ id: event.id, status: 'processing' }] })
  })
}
