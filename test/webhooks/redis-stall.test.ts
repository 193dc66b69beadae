/**
 * The inbox on a Redis that stops answering with its connection up (DEBUG SLEEP, as a stuck or
 * overloaded server would): intake answers 503 WEBHOOK_STORE_UNAVAILABLE within SPEC §10's 5 s,
 * never hangs, and the provider's retry once Redis answers again is taken (200).
 */
import t from 'tap'
import { Redis } from 'ioredis'
import { assertProxyError } from '../helpers/proxy-error.js'
import { eventually } from '../helpers/eventually.js'
import { startRedis, stallProbe } from '../helpers/redis-server.js'
import { inboxEnv, post, startApp, startInbox } from './inbox-harness.js'

t.test('with Redis stalled, intake answers 503 WEBHOOK_STORE_UNAVAILABLE within 5 s; the retry after it is answered 200', async (t) => {
  const redis = await startRedis(t)
  const app = await startApp(t)
  const inbox = await startInbox(t, inboxEnv(app.url, '/nonexistent/not-used.db', { PROXY_REDIS_URL: redis.url }))
  await eventually(() => inbox.store.ready(), { what: 'connected' })
  const admin = new Redis(redis.url, { lazyConnect: true })
  t.teardown(() => admin.disconnect())
  await admin.connect()
  const probe = await stallProbe(t, redis.url)
  const sleeping = admin.call('DEBUG', 'SLEEP', '4').catch(() => null)
  await probe.untilBlocked()
  const started = Date.now()
  const res = await post(inbox.intakeUrl, '{"n":"stalled"}')
  const tookMs = Date.now() - started
  await assertProxyError(t, res, 503, 'WEBHOOK_STORE_UNAVAILABLE', 'Redis stalled')
  t.ok(tookMs < 5_000, `answered in ${tookMs} ms`)
  await sleeping
  t.equal((await post(inbox.intakeUrl, '{"n":"stalled"}')).status, 200, 'the retry')
})
