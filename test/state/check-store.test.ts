import t from 'tap'
import { Redis } from 'ioredis'
import { StateUnavailableError } from '../../src/errors.js'
import { checkStore } from '../../src/state/check-store.js'
import { createRedisStore } from '../../src/state/redis-store.js'
import { eventually, HANG_MS } from '../helpers/eventually.js'
import { captureLogger } from '../helpers/harness.js'
import { redisConnection, startRedis } from '../helpers/redis-server.js'

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

// Issue 35 item 6: Redis answers a wrong password at once; that answer is the reason, not a timeout.
t.test('a wrong or missing Redis password is reported as Redis\'s own refusal, at once, in check and the log', async (t) => {
  const password = 'check-pw-Zq82'
  const redis = await startRedis(t, { password })
  const { logger, logs } = captureLogger()
  const cases: Array<[string, string, RegExp]> = [
    ['wrong password', `redis://:wrong-${password}@127.0.0.1:${redis.port}`, /WRONGPASS: the user name or password in the URL is wrong/],
    ['no password', `redis://127.0.0.1:${redis.port}`, /NOAUTH: Redis requires a password and the URL has none/],
  ]
  for (const [label, url, expected] of cases) {
    const started = Date.now()
    const failed = await checkStore({ state: { redisUrl: url, keyPrefix: 'pap:' } }, logger)
    t.equal(failed.ok, false, label)
    t.match(failed.line, /^FAIL {2}state store: Redis refused the connection: /, label)
    t.match(failed.line, expected, label)
    t.ok(Date.now() - started < 3000, `${label}: reported without waiting out the 5 s`)
  }
  t.match(logs.find('state store unavailable'), [{ reason: /^WRONGPASS/ }, { reason: /^NOAUTH/ }], 'the log line says which refusal too')
  t.notMatch(logs.lines.join('\n'), password, 'the password is never logged')
})

t.test('a database number beyond the server\'s databases setting is Redis\'s refusal, not a silent database 0', async (t) => {
  const redis = await startRedis(t, { databases: 4 })
  const { logger } = captureLogger()
  const failed = await checkStore({ state: { redisUrl: `${redis.url}/9`, keyPrefix: 'pap:' } }, logger)
  t.equal(failed.ok, false)
  t.match(failed.line, /DB index is out of range: the database number in the URL is beyond this server's databases setting/)
  const store = createRedisStore({ redis: redisConnection(t, `${redis.url}/9`, 'pap:'), log: logger })
  t.teardown(() => store.close())
  await eventually(() => store.status().refusal !== undefined, { what: 'the refused SELECT' })
  // The connection comes up all the same, and a store that is down asks for an answer every second
  // once its connection is ready: Redis seeing that PING shows the store was told it is ready (a
  // store that took it for ready would say so instead).
  const admin = new Redis(redis.url)
  t.teardown(() => { admin.disconnect() })
  const adminId = String(await admin.client('ID'))
  const pinged = async (): Promise<boolean> => String(await admin.client('LIST')).split('\n').some((line) => /^id=(\d+) /.exec(line)?.[1] !== adminId && /\bcmd=ping\b/.test(line))
  await eventually(async () => store.status().ready || await pinged(), { what: 'the store told its connection is ready', timeoutMs: HANG_MS })
  t.equal(store.status().ready, false, 'not ready although the connection is up')
  await t.rejects(store.claim('k', 60_000), StateUnavailableError, 'requests fail closed instead of using database 0')
})
