/**
 * SPEC §11 across replicas sharing Redis: two decisions arriving at two replicas at once, one wins
 * and the other is 409; the approved request is sent once though both replicas' workers look.
 */
import t from 'tap'
import { join } from 'node:path'
import { eventually } from '../helpers/eventually.js'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'
import { SIGNING_SECRET, approvalsCallersFile, decide, pay, payouts, tempDir, type HeldAnswer } from './approvals-harness.js'

t.test('two replicas: decisions at once on each, one wins; the approved payout is sent once', async (t) => {
  const provider = await startProvider(t)
  const redis = await startRedis(t)
  const dir = tempDir(t)
  const env = providerEnv(provider, { PROXY_REDIS_URL: redis.url, PROXY_CALLERS_FILE: approvalsCallersFile(dir), PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_WEBHOOK_STORE_PATH: join(dir, 'unused.db') })
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
  // Both replicas' workers look once a second: give them time to send it again, if they would.
  await new Promise((resolve) => setTimeout(resolve, 2500))
  t.equal(payouts(provider).length, 1, 'sent once')
  t.equal((await pay(b, held)).headers.get('idempotent-replayed'), 'true', 'either replica answers the retry from the record')
})
