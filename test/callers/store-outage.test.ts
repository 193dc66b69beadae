/**
 * SPEC §9 in one process: while the shared store is unreachable, a request that needs it (a rate
 * limit, an amount limit, an idempotency check) is refused with 503 STATE_UNAVAILABLE within 2 s
 * and reaches no upstream; a request that needs none passes. Two outages against a real
 * redis-server: killed (the connection drops) and stalled (DEBUG SLEEP: the connection stays up,
 * answers stop). The memory store cannot fail a rate window or a day total, so these cases exist
 * only with Redis. Also checked during the outage: the store metrics, /readyz, one error line.
 * Guards the mutations "admit when the store errors", "reserve ok when the store errors" and
 * "forward when the claim errors" (test:guards); test/idempotency/replicas.test.ts runs the built
 * bundle, so it cannot see a mutation of src/.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { request } from 'undici'
import { keySha256 } from '../../src/callers/judge-caller.js'
import { eventually } from '../helpers/eventually.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { providerEnv, startProvider, startProxy, waitReady, type RunningProxy } from '../helpers/harness.js'
import { startRedis, stallProbe, type RedisServer } from '../helpers/redis-server.js'

const RATE_KEY = 'pak_rate-limited-agent-key-0123456789abcdefghijkl'
const AMOUNT_KEY = 'pak_amount-limited-agent-key-0123456789abcdefgh'
const FREE_KEY = 'pak_unlimited-agent-key-0123456789abcdefghijklmn'

function callersFile (): string {
  const file = join(mkdtempSync(join(tmpdir(), 'store-outage-')), 'callers.yaml')
  writeFileSync(file, `callers:
  - id: rate-agent
    keySha256: ${keySha256(RATE_KEY)}
    allow: [{ methods: [GET] }]
    rateLimit: { requests: 1000, perSeconds: 60 }
  - id: amount-agent
    keySha256: ${keySha256(AMOUNT_KEY)}
    allow: [{ methods: [POST] }]
    amountLimits:
      - amount: /amount
        currency: /currency
        perDay: { KES: 1000000 }
  - id: free-agent
    keySha256: ${keySha256(FREE_KEY)}
    allow: [{ methods: [GET, POST] }]
`)
  return file
}

const AMOUNT = '"amount":"10","currency":"KES"'

interface Answer { status: number, headers: Record<string, string | string[] | undefined>, body: string, ms: number }

/** A GET, or a POST of `{body}`: without a reference it needs no idempotency check. */
async function send (proxy: RunningProxy, key: string, method: 'GET' | 'POST', body = `{${AMOUNT}}`): Promise<Answer> {
  const started = Date.now()
  const res = await request(`${proxy.url}/sandbox/fiat/payouts`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(method === 'POST' ? { body } : {}),
  })
  return { status: res.statusCode, headers: res.headers, body: await res.body.text(), ms: Date.now() - started }
}

let references = 0
const referenced = (): string => `{${AMOUNT},"externalReference":"outage-${++references}"}`

async function startAll (t: Test): Promise<{ proxy: RunningProxy, redis: RedisServer, forwarded: () => number }> {
  const provider = await startProvider(t)
  const redis = await startRedis(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: callersFile(), PROXY_REDIS_URL: redis.url }))
  await waitReady(proxy)
  await eventually(() => proxy.store.status().ready, { what: 'the proxy to reach Redis' })
  t.equal((await send(proxy, RATE_KEY, 'GET')).status, 200, 'before the outage the rate-limited caller passes')
  t.equal((await send(proxy, AMOUNT_KEY, 'POST')).status, 200, 'and so does the amount-limited one')
  t.equal((await send(proxy, FREE_KEY, 'POST', referenced())).status, 200, 'and a POST with a reference')
  return { proxy, redis, forwarded: () => provider.upstreamRequests.length }
}

async function assertFailsClosed (t: Test, proxy: RunningProxy, forwarded: () => number): Promise<void> {
  const before = forwarded()
  const [rate, amount, referencedPost] = await Promise.all([send(proxy, RATE_KEY, 'GET'), send(proxy, AMOUNT_KEY, 'POST'), send(proxy, FREE_KEY, 'POST', referenced())])
  for (const [name, answer] of [['rate-limited GET', rate], ['amount-limited POST', amount], ['POST with a reference (idempotency check)', referencedPost]] as const) {
    await assertProxyError(t, answer, 503, 'STATE_UNAVAILABLE', name)
    t.equal(answer.headers['retry-after'], '1', `${name}: Retry-After within 2 s`)
    t.ok(answer.ms < 2000, `${name}: refused within 2 s (${answer.ms} ms)`)
  }
  t.equal(forwarded(), before, 'nothing forwarded unchecked')
  const free = await send(proxy, FREE_KEY, 'POST')
  t.equal(free.status, 200, 'a POST without a reference by a caller with no limit needs no shared state and passes')
  t.equal(forwarded(), before + 1)
  const metrics = await (await request(`${proxy.url}/metrics`)).body.text()
  t.match(metrics, /^payments_auth_proxy_state_store_up\{kind="redis"\} 0$/m, 'the store metric shows the outage')
  for (const op of ['hit', 'reserve', 'claim']) {
    const errors = new RegExp(`^payments_auth_proxy_state_store_errors_total\\{op="${op}"\\} (\\d+)$`, 'm').exec(metrics)?.[1]
    t.ok(Number(errors) >= 1, `the failed ${op} is counted (${errors})`)
  }
  const readyz = await request(`${proxy.url}/readyz`)
  t.equal(readyz.statusCode, 200, '/readyz stays 200 while tokens are held')
  t.match(await readyz.body.json(), { state: { ready: false } }, 'and shows the store not ready')
  // The line goes out through the proxy's asynchronous log destination: a loaded machine may write
  // it after the refusals were answered. More refusals than lines shows it is not one per request.
  // A Redis slow to exit on a loaded machine may take one reconnection before it is gone: that is a
  // second outage, with its recovery logged between the two lines.
  const errorLines = (): number => proxy.logs.find('state store unavailable').filter((r) => r['level'] === 50).length
  await eventually(() => errorLines() >= 1, { what: 'the outage\'s error line' })
  t.equal(errorLines(), 1 + proxy.logs.find('state store recovered').length, 'one error line per outage seen, not one per refused request')
}

async function assertRecovers (t: Test, proxy: RunningProxy): Promise<void> {
  await eventually(async () => (await send(proxy, RATE_KEY, 'GET')).status === 200, { what: 'the rate-limited caller to pass again', everyMs: 50 })
  t.equal((await send(proxy, AMOUNT_KEY, 'POST')).status, 200, 'recovered without a restart')
  t.equal((await send(proxy, FREE_KEY, 'POST', referenced())).status, 200, 'idempotency too')
  const metrics = await (await request(`${proxy.url}/metrics`)).body.text()
  t.match(metrics, /^payments_auth_proxy_state_store_up\{kind="redis"\} 1$/m, 'the store metric shows the recovery')
}

t.test('Redis killed: rate-limited, amount-limited and referenced requests fail closed with 503, then recover', async (t) => {
  const { proxy, redis, forwarded } = await startAll(t)
  await redis.stop()
  await assertFailsClosed(t, proxy, forwarded)
  await redis.start()
  await assertRecovers(t, proxy)
})

t.test('Redis stalled (DEBUG SLEEP): rate-limited, amount-limited and referenced requests fail closed with 503 within 2 s, never hang', async (t) => {
  const { proxy, redis, forwarded } = await startAll(t)
  const admin = new Redis(redis.url)
  admin.on('error', () => {})
  t.teardown(() => admin.disconnect())
  await admin.ping()
  const probe = await stallProbe(t, redis.url)
  const stalled = admin.call('DEBUG', 'SLEEP', '4').catch(() => null)
  await probe.untilBlocked()
  await assertFailsClosed(t, proxy, forwarded)
  await stalled
  await assertRecovers(t, proxy)
})
