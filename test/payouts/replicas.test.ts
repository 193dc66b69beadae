/**
 * SPEC §16 with two replicas on one Redis: the same payout sent under two references at the same
 * moment, one to each replica, is forwarded once (50 pairs); a failed payout's amount is given back
 * once, whichever replica settles it, with the replica it was sent to killed (SIGKILL) at a random
 * moment after it answered, ten times.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { keySha256 } from '../../src/callers/judge-caller.js'
import { eventually } from '../helpers/eventually.js'
import { startRedis } from '../helpers/redis-server.js'
import { kill, paymentOf, payout, setting, startInProcess, startSidecar } from '../payments/payments-harness.js'

const AGENT = 'pak_payout-replicas-agent-0123456789abcdefghijklm'

t.test('50 pairs of one payout under two references, one to each replica at once: exactly one of each pair forwarded', async (t) => {
  const redis = await startRedis(t)
  const { provider, env } = await setting(t, { PROXY_REDIS_URL: redis.url })
  const replicas = [await startInProcess(t, env), await startInProcess(t, env)] as const
  const outcomes: string[] = []
  for (let i = 0; i < 50; i++) {
    const body = (reference: string): Record<string, unknown> => ({ amount: 100 + i, currency: 'KES', externalReference: reference, recipient: `+254 766 ${String(i).padStart(6, '0')}` })
    const answers = await Promise.all([payout(replicas[0].url, body(`pair-${i}-a`)), payout(replicas[1].url, body(`pair-${i}-b`))])
    const statuses = answers.map((res) => res.status).sort()
    outcomes.push(statuses.join('/'))
    await Promise.all(answers.map(async (res) => await res.arrayBuffer()))
  }
  t.same(outcomes, Array.from({ length: 50 }, () => '200/409'), 'one forwarded, one caught as a probable duplicate, every time')
  t.equal(provider.upstreamRequests.filter((r) => r.url.includes('/payouts')).length, 50, 'the provider saw one payout of each pair')
})

t.test('a failed payout\'s amount given back once on two replicas, the one it was sent to killed at a random moment (ten runs)', async (t) => {
  const redis = await startRedis(t)
  const setup = await setting(t, {
    PROXY_REDIS_URL: redis.url,
    PROXY_PAYMENTS_LOOKUP_SCHEDULE: '1s,2s,4s',
    PROXY_UPSTREAM_TIMEOUT_SECONDS: '1',
  }, { settleAfterMs: 600_000 })
  const callers = join(setup.dir, 'callers.yaml')
  writeFileSync(callers, `callers:\n  - { id: agent, keySha256: ${keySha256(AGENT)}, allow: [{}], amountLimits: [{ amount: /amount, currency: /currency, perDay: { KES: 100000 } }] }\n`)
  const env = { ...setup.env, PROXY_CALLERS_FILE: callers }
  const survivor = await startSidecar(t, env)
  const used = async (): Promise<string> => {
    const { limits } = await (await fetch(`${survivor.url}/limits`, { headers: { authorization: `Bearer ${AGENT}` } })).json() as { limits: Array<{ usedToday: string }> }
    return limits[0]?.usedToday ?? ''
  }
  t.equal((await payout(survivor.url, { amount: 10, currency: 'KES', externalReference: 'stays-pending', recipient: '254700100000' }, AGENT)).status, 200)
  t.equal(await used(), '10', 'a pending payout stays counted')
  setup.provider.transactions.configure({ settleAfterMs: 300, finalStatus: 'failed' })
  for (let run = 0; run < 10; run++) {
    const victim = await startSidecar(t, env)
    const reference = `fails-${run}`
    t.equal((await payout(victim.url, { amount: 1, currency: 'KES', externalReference: reference, recipient: `2547002000${run}` }, AGENT)).status, 200)
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 1500)))
    await kill(victim.child)
    await eventually(async () => (await paymentOf(survivor.url, reference, AGENT))?.state === 'failed', { what: `${reference} failed`, timeoutMs: 20_000 })
    let last = ''
    await eventually(async () => (last = await used()) === '10', { what: `${reference}'s amount given back`, timeoutMs: 20_000, detail: () => `usedToday ${last}` })
  }
  // Past any lease the killed replicas held (upstream timeout + 5 s): a second giving-back would have come by now.
  await new Promise((resolve) => setTimeout(resolve, 7_000))
  t.equal(await used(), '10', 'each failed amount given back once: the pending payout is still counted')
})
