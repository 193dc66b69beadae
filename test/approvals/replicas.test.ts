/**
 * SPEC §11 across replicas sharing Redis: two decisions arriving at two replicas at once, one wins
 * and the other is 409; the approved request is sent once though both replicas' workers look; a
 * held amount is given back once, whichever replica or loop settles it (rejections at once on both,
 * expiries seen by both loops).
 */
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { APPROVAL_LOOK_INTERVAL_MS } from '../../src/approvals/approval-worker.js'
import { eventually } from '../helpers/eventually.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { providerEnv, startProvider, startProxy, waitReady, type RunningProxy } from '../helpers/harness.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { startRedis } from '../helpers/redis-server.js'
import { afterPasses, passesIn } from '../helpers/worker-passes.js'
import { SEALING_SECRET, SIGNING_SECRET, approvalsCallersFile, decide, pay, payouts, tempDir, type HeldAnswer } from './approvals-harness.js'

t.test('two replicas: decisions at once on each, one wins; the approved payout is sent once', async (t) => {
  const provider = await startProvider(t)
  const redis = await startRedis(t)
  const dir = tempDir(t)
  const env = providerEnv(provider, { PROXY_REDIS_URL: redis.url, PROXY_CALLERS_FILE: approvalsCallersFile(dir), PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET, PROXY_WEBHOOK_STORE_PATH: join(dir, 'unused.db') })
  const replicas = [await startProxy(t, env), await startProxy(t, env)]
  for (const replica of replicas) {
    await waitReady(replica)
    await eventually(() => replica.store.status().ready, { what: 'Redis' })
  }
  const [a, b] = replicas as [typeof replicas[0], typeof replicas[0]]
  const held = { amount: '300', currency: 'KES', externalReference: 'replicas-1' }
  const { approval } = await (await pay(a, held)).json() as HeldAnswer
  t.equal((await pay(b, held)).status, 202, 'the other replica knows the approval')
  const answers = await Promise.all([decide(a, approval.id, 'approve', { by: 'Ann' }), decide(b, approval.id, 'approve', { by: 'Bob' })])
  t.same(answers.map((r) => r.status).sort(), [200, 409])
  await eventually(() => payouts(provider).length === 1, { what: 'the approved payout', timeoutMs: 5000 })
  // Both replicas' forward loops look once a second and send what they find: two more looks each had their chance to send it again.
  await afterPasses(replicas.map((r) => passesIn(r.metrics.registry, 'approvals_forward')), { what: 'both replicas\' forward loops', between: async () => { for (const r of replicas) r.shared.approvals?.nudge() } })
  t.equal(payouts(provider).length, 1, 'sent once')
  t.equal((await pay(b, held)).headers.get('idempotent-replayed'), 'true', 'either replica answers the retry from the record')
})

/** The shortest approval lifetime the configuration takes. */
const TTL_S = 60
const DAY_MS = 86_400_000

/**
 * 2,000 KES sent (20 × 100, forwarded alone), then 30 × 200 held on alternating replicas: 8,000
 * counted. However the 30 are settled, 6,000 comes back once: 2,000 stays, so 8,000 more is still
 * admitted (held) and 8,001 is refused. An amount given back twice would have taken the total to 0.
 */
async function replicasWithHolds (t: Test, clocks: [FakeClock, FakeClock] | null): Promise<{ replicas: [RunningProxy, RunningProxy], ids: string[], provider: Awaited<ReturnType<typeof startProvider>> }> {
  const provider = await startProvider(t)
  const redis = await startRedis(t)
  const dir = tempDir(t)
  const env = providerEnv(provider, {
    PROXY_REDIS_URL: redis.url, PROXY_CALLERS_FILE: approvalsCallersFile(dir, { perRequest: 10_000, perDay: 10_000 }), PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET, PROXY_WEBHOOK_STORE_PATH: join(dir, 'unused.db'), PROXY_APPROVAL_TTL_SECONDS: String(TTL_S),
  })
  const replicas = [await startProxy(t, env, clocks === null ? {} : { clock: clocks[0] }), await startProxy(t, env, clocks === null ? {} : { clock: clocks[1] })] as [RunningProxy, RunningProxy]
  for (const replica of replicas) {
    await waitReady(replica)
    await eventually(() => replica.store.status().ready, { what: 'Redis' })
  }
  for (let i = 0; i < 20; i++) t.equal((await pay(replicas[i % 2] as RunningProxy, { amount: '100', currency: 'KES', externalReference: `sent-${i}` })).status, 200)
  const ids: string[] = []
  for (let i = 0; i < 30; i++) {
    const res = await pay(replicas[i % 2] as RunningProxy, { amount: '200', currency: 'KES', externalReference: `held-${i}` })
    t.equal(res.status, 202)
    ids.push(((await res.json()) as HeldAnswer).approval.id)
  }
  return { replicas, ids, provider }
}

async function assertGivenBackOnce (t: Test, replicas: [RunningProxy, RunningProxy]): Promise<void> {
  const givenBack = (): number => replicas.reduce((n, r) => n + r.logs.find('held amount given back to the day total').length, 0)
  await eventually(() => givenBack() === 30, { what: '30 settled', timeoutMs: 10_000 })
  await assertProxyError(t, await pay(replicas[0], { amount: '8001', currency: 'KES', externalReference: 'probe-over' }), 403, 'AMOUNT_LIMIT_EXCEEDED', '2,000 still counted: 8,001 more is over the day')
  t.equal((await pay(replicas[1], { amount: '8000', currency: 'KES', externalReference: 'probe-within' })).status, 202, 'and the 6,000 came back: 8,000 more is held')
  t.equal(givenBack(), 30, 'each settled once')
}

t.test('two replicas: 30 held payouts rejected at once, alternately on each: each amount given back once', async (t) => {
  const { replicas, ids, provider } = await replicasWithHolds(t, null)
  const answers = await Promise.all(ids.map(async (id, i) => await decide(replicas[i % 2] as RunningProxy, id, 'reject', { by: 'Ann' })))
  t.same(answers.map((r) => r.status), ids.map(() => 200))
  await assertGivenBackOnce(t, replicas)
  t.equal(payouts(provider).length, 20, 'none of the held ones sent')
})

t.test('two replicas: 30 held payouts expiring, both replicas\' loops settling them: each amount given back once', async (t) => {
  // The day totals are per UTC day: the expiry must not step over midnight, or the probes would count on another day.
  const now = Date.now()
  const wallMs = DAY_MS - (now % DAY_MS) < 10 * 60_000 ? now - 10 * 60_000 : now
  const clocks: [FakeClock, FakeClock] = [new FakeClock(wallMs), new FakeClock(wallMs)]
  const { replicas, provider } = await replicasWithHolds(t, clocks)
  for (const clock of clocks) clock.jumpWall(TTL_S * 1000 + 1000)
  await eventually(async () => {
    await Promise.all(clocks.map(async (clock) => { await clock.advance(APPROVAL_LOOK_INTERVAL_MS) }))
    return replicas.reduce((n, r) => n + r.logs.find('held amount given back to the day total').length, 0) === 30
  }, { what: 'the expiries settled', timeoutMs: 10_000 })
  await assertGivenBackOnce(t, replicas)
  t.equal(payouts(provider).length, 20, 'none of the held ones sent')
})
