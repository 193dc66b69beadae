/**
 * SPEC §8–§9 with several replicas: two built proxy processes (what `npm start` runs) share one real
 * redis-server. Duplicates across replicas reach the provider once; a record written by one is
 * replayed by the other; Redis killed mid-load fails closed and recovers; a crashed replica's
 * in-flight mark expires on its own.
 */
import t, { type Test } from 'tap'
import { request } from 'undici'
import type { FakeProvider } from '../../src/fake-provider/index.js'
import { listeningPort, runCli, type Child } from '../helpers/child-proxy.js'
import { deferred } from '../helpers/deferred.js'
import { eventually, HANG_MS } from '../helpers/eventually.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'
import { assertProxyError } from '../helpers/proxy-error.js'

const PATH = '/sandbox/fiat/v1/payouts'

interface Replica { child: Child, url: string }

async function startReplica (t: Test, provider: FakeProvider, redisUrl: string, env: Record<string, string> = {}): Promise<Replica> {
  const child = runCli(t, [], { ...providerEnv(provider), PROXY_REDIS_URL: redisUrl, LOG_LEVEL: 'info', ...env })
  await child.waitFor(/ready to accept requests/)
  await child.waitFor(/token obtained[\s\S]*token obtained/)
  return { child, url: `http://127.0.0.1:${listeningPort(child)}` }
}

async function post (url: string, body: string) {
  const res = await request(`${url}${PATH}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() }
}

function countingProvider (provider: FakeProvider, delayMs = 0): () => number {
  let n = 0
  provider.setUpstreamHandler((req, res) => {
    if (!(req.url ?? '').includes('/payouts')) return false
    n++
    const id = n
    setTimeout(() => {
      res.writeHead(201, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ id }))
    }, delayMs)
    return true
  })
  return () => n
}


t.test('50 concurrent duplicates across two replicas reach the provider exactly once; the record is shared', async (t) => {
  const provider = await startProvider(t)
  const redis = await startRedis(t)
  const hits = countingProvider(provider, 200)
  const [a, b] = await Promise.all([startReplica(t, provider, redis.url), startReplica(t, provider, redis.url)])
  if (a === undefined || b === undefined) throw new Error('replicas')
  const body = '{"externalReference":"shared-1","amount":"5.00"}'
  const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => post(i % 2 === 0 ? a.url : b.url, body)))
  t.equal(hits(), 1, 'one request reached the provider')
  t.equal(answers.filter((r) => r.status === 201).length >= 1, true, 'the claimant got the answer')
  for (const r of answers.filter((r) => r.status !== 201)) await assertProxyError(t, r, 409, 'IDEMPOTENCY_IN_PROGRESS', 'the others: 409 or a replay')
  const fromA = await post(a.url, body)
  const fromB = await post(b.url, '{ "amount": "5.00", "externalReference": "shared-1" }')
  t.equal(fromA.headers['idempotent-replayed'], 'true')
  t.equal(fromB.headers['idempotent-replayed'], 'true', 'the other replica replays the same record')
  t.equal(fromB.body, fromA.body)
  await assertProxyError(t, await post(b.url, '{"externalReference":"shared-1","amount":"6.00"}'), 422, 'IDEMPOTENCY_KEY_REUSED', 'reuse is refused on either replica')
  t.equal(hits(), 1)
})

t.test('Redis killed mid-load: keyed requests fail closed with 503 STATE_UNAVAILABLE, others pass, then recovery', async (t) => {
  const provider = await startProvider(t)
  const redis = await startRedis(t)
  const hits = countingProvider(provider)
  const a = await startReplica(t, provider, redis.url)
  t.equal((await post(a.url, '{"externalReference":"before"}')).status, 201)
  await redis.stop()
  const before = hits()
  const started = Date.now()
  const during = await Promise.all(Array.from({ length: 20 }, (_, i) => post(a.url, `{"externalReference":"down-${i}"}`)))
  t.ok(Date.now() - started < 2000, 'every refusal within 2 s')
  for (const r of during) await assertProxyError(t, r, 503, 'STATE_UNAVAILABLE', 'while Redis is down')
  t.ok(during.every((r) => r.headers['retry-after'] === '1'), 'each with Retry-After: 1')
  t.equal(hits(), before, 'nothing forwarded unchecked')
  const get = await request(`${a.url}/sandbox/fiat/v1/balances`)
  await get.body.text()
  t.equal(get.statusCode, 200, 'a request that needs no state passes')
  const plain = await post(a.url, '{"amount":"1.00"}')
  t.equal(plain.status, 201, 'a POST without a reference passes')
  const readyz = await request(`${a.url}/readyz`)
  const ready = await readyz.body.json() as { ready: boolean, state: { ready: boolean } }
  t.equal(readyz.statusCode, 200, 'readiness stays 200 while tokens are held')
  t.same(ready.state, { ready: false })
  await redis.start()
  let back = { status: 0 }
  await eventually(async () => {
    back = await post(a.url, '{"externalReference":"after"}')
    return back.status !== 503
  }, { what: 'the proxy to reach the restarted Redis', everyMs: 50, timeoutMs: HANG_MS })
  t.equal(back.status, 201, 'recovered without a restart')
  // The recovery line is written when the connection reports ready, which may follow the first
  // command that got through by a moment.
  await eventually(() => a.child.stdout().includes('"msg":"state store recovered"'), { what: 'the recovery logged', timeoutMs: HANG_MS })
  t.equal((a.child.stdout().match(/"msg":"state store unavailable"/g) ?? []).length, 1, 'one error line for the outage')
})

t.test('a replica killed mid-request: its mark expires on its own and another replica forwards the retry', async (t) => {
  const provider = await startProvider(t)
  const redis = await startRedis(t)
  const hold = deferred()
  let n = 0
  provider.setUpstreamHandler(async (req, res) => {
    if (!(req.url ?? '').includes('/payouts')) return false
    n++
    if (n === 1) { await hold.promise; return true }
    res.writeHead(201, { 'content-type': 'application/json' })
    res.end('{"second":true}')
    return true
  })
  t.teardown(() => { hold.resolve() })
  // Shortest settings: the mark lives token + 2 x upstream timeout + 5 s margin = 8 s.
  const env = { PROXY_UPSTREAM_TIMEOUT_SECONDS: '1', PROXY_TOKEN_TIMEOUT_SECONDS: '1' }
  const a = await startReplica(t, provider, redis.url, env)
  const b = await startReplica(t, provider, redis.url, env)
  const body = '{"externalReference":"crash-1"}'
  const lost = post(a.url, body).catch(() => null)
  await eventually(() => n > 0, { what: 'the first payout to reach the provider' })
  a.child.process.kill('SIGKILL')
  await lost
  await assertProxyError(t, await post(b.url, body), 409, 'IDEMPOTENCY_IN_PROGRESS', 'in flight while the mark lives')
  let retry = { status: 0 }
  await eventually(async () => {
    retry = await post(b.url, body)
    return retry.status !== 409
  }, { what: 'the crashed replica\'s in-flight mark to expire', timeoutMs: 8_000 + HANG_MS, everyMs: 250 })
  t.equal(retry.status, 201, 'forwarded again once the mark expired')
  t.equal(n, 2)
})

t.test('the store holds no secret: no key or value carries the API key, public key, token or Redis password', async (t) => {
  const provider = await startProvider(t)
  const password = 'redis-pw-marker-Zq81'
  const redis = await startRedis(t, { password })
  countingProvider(provider)
  const a = await startReplica(t, provider, redis.url, { LOG_LEVEL: 'trace' })
  await post(a.url, '{"externalReference":"secret-scan"}')
  // BAD_INPUTS: a 10 KB reference with control characters is bounded, never a 10 KB store key.
  await post(a.url, JSON.stringify({ externalReference: `${'x'.repeat(10_000)}\u0001\n\u0000` }))
  const { Redis } = await import('ioredis')
  const admin = new Redis(redis.url)
  admin.on('error', () => {})
  t.teardown(() => admin.disconnect())
  const keys = await admin.keys('*')
  t.ok(keys.length > 0, 'something was stored')
  const longest = Math.max(...keys.map((k) => k.length))
  t.ok(longest < 200, `every key is short (the longest has ${longest} characters)`)
  t.notOk(keys.some((k) => [...k].some((c) => c.charCodeAt(0) < 0x20)), 'no key holds a control character')
  const dump = [...keys, ...(await Promise.all(keys.map((k) => admin.get(k)))).map(String)].join('\n')
  const secrets = [...provider.issuedTokens, password]
  const { DEMO_CREDENTIALS } = await import('../helpers/harness.js')
  for (const c of Object.values(DEMO_CREDENTIALS)) secrets.push(c.apiKey, c.publicKey)
  for (const secret of secrets) t.notOk(dump.includes(secret), 'no secret in the store')
  const output = a.child.stdout() + a.child.stderr()
  t.notOk(output.includes(password), 'the Redis password is in no log line')
})
