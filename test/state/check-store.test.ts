import t from 'tap'
import { checkStore } from '../../src/state/check-store.js'
import { captureLogger } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'

t.test('check reaches the configured Redis, or fails naming the setting and never the URL', async (t) => {
  const password = 'check-pw-Zq81'
  const redis = await startRedis(t, { password })
  const { logger, logs } = captureLogger()
  t.same(await checkStore({ state: { redisUrl: null, keyPrefix: 'pap:' } }, logger), { ok: true, line: 'skip  state store: in memory (PROXY_REDIS_URL not set)' })
  const ok = await checkStore({ state: { redisUrl: redis.url, keyPrefix: 'pap:' } }, logger)
  t.same(ok, { ok: true, line: 'ok    state store: Redis answers' })
  const wrong = `redis://:wrong-${password}@127.0.0.1:${redis.port}`
  const failed = await checkStore({ state: { redisUrl: wrong, keyPrefix: 'pap:' } }, logger)
  t.equal(failed.ok, false)
  t.match(failed.line, /^FAIL {2}state store: .*PROXY_REDIS_URL/)
  t.notMatch(failed.line + logs.lines.join('\n'), password, 'the password is never printed or logged')
})
