/**
 * SPEC §8 over real sockets, one proxy with the memory store in front of the fake provider: replay,
 * reuse, in flight, which answers are recorded, the reference rules, and PROXY_IDEMPOTENCY=off.
 */
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { request } from 'undici'
import type { FakeProvider } from '../../src/fake-provider/index.js'
import type { Env } from '../../src/load-config.js'
import { keySha256 } from '../../src/callers/judge-caller.js'
import { systemClock } from '../../src/clock.js'
import type { ServerDeps } from '../../src/server.js'
import { createMemoryStore } from '../../src/state/memory-store.js'
import type { StateStore } from '../../src/state/state-store.js'
import { deferred } from '../helpers/deferred.js'
import { providerEnv, startProvider, startProxy, waitReady, type RunningProxy } from '../helpers/harness.js'
import { SANDBOX_ONLY } from '../tokens/token-kit.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { eventually } from '../helpers/eventually.js'

const PATH = '/sandbox/fiat/v1/payouts'

function connections (server: { getConnections (cb: (err: Error | null, count: number) => void): void }): Promise<number> {
  return new Promise((resolve, reject) => { server.getConnections((err, count) => { if (err === null) resolve(count); else reject(err) }) })
}

/** A proxy for the sandbox (both environments with `both`), its provider answering payouts 201 with a count. */
async function rig (t: Test, env: Env = {}, deps: Partial<ServerDeps> = {}, both = false): Promise<{ provider: FakeProvider, proxy: RunningProxy, hits: () => number }> {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { ...(both ? {} : SANDBOX_ONLY), ...env }), deps)
  await waitReady(proxy)
  let n = 0
  provider.setUpstreamHandler((req, res, body) => {
    if (!(req.url ?? '').includes('/payouts')) return false
    n++
    const text = JSON.stringify({ id: `payout-${n}`, received: body.toString('utf8') })
    // A declared length: the answer is held whole (upstream-response.ts) and stored before it is sent.
    res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-provider-trace': `t${n}` })
    res.end(text)
    return true
  })
  return { provider, proxy, hits: () => n }
}

async function post (proxy: RunningProxy, body: string | Buffer, headers: Record<string, string> = {}, path = PATH) {
  const res = await request(`${proxy.url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } })
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() }
}

t.test('the same reference and body is replayed from the record: same status, headers and bytes, nothing forwarded', async (t) => {
  const { proxy, hits } = await rig(t)
  const body = '{"externalReference":"ref-1","amount":"10.00","currency":"KES"}'
  const first = await post(proxy, body)
  t.equal(first.status, 201)
  t.equal(first.headers['idempotent-replayed'], undefined, 'the first answer is not a replay')
  const again = await post(proxy, body)
  t.equal(again.status, 201)
  t.equal(again.body, first.body, 'the recorded bytes')
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(again.headers['x-provider-trace'], 't1', 'the recorded end-to-end headers')
  t.equal(again.headers['content-type'], 'application/json')
  t.ok(typeof again.headers['x-request-id'] === 'string' && again.headers['x-request-id'] !== first.headers['x-request-id'], 'the replay carries its own request id, not the first one\'s')
  const reordered = await post(proxy, '{ "currency": "KES",\n  "amount": "10.00", "externalReference": "ref-1" }')
  t.equal(reordered.status, 201)
  t.equal(reordered.body, first.body, 'the same JSON value in another member order and spacing replays')
  t.equal(hits(), 1, 'the provider saw one request')
})

t.test('the same reference with another body is 422 IDEMPOTENCY_KEY_REUSED, nothing forwarded', async (t) => {
  const { proxy, hits } = await rig(t)
  await post(proxy, '{"externalReference":"ref-2","amount":"10.00"}')
  const reused = await post(proxy, '{"externalReference":"ref-2","amount":"10.01"}')
  await assertProxyError(t, reused, 422, 'IDEMPOTENCY_KEY_REUSED')
  t.equal(hits(), 1)
})

t.test('a duplicate while the first is in flight is 409 IDEMPOTENCY_IN_PROGRESS with Retry-After: 1, then replays', async (t) => {
  const { provider, proxy } = await rig(t)
  const release = deferred()
  const arrived = deferred()
  let n = 0
  provider.setUpstreamHandler((_req, res) => {
    n++
    arrived.resolve()
    void release.promise.then(() => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"done":true}') })
    return true
  })
  const body = '{"externalReference":"ref-3"}'
  const first = post(proxy, body)
  await arrived.promise
  const duplicate = await post(proxy, body)
  await assertProxyError(t, duplicate, 409, 'IDEMPOTENCY_IN_PROGRESS')
  t.equal(duplicate.headers['retry-after'], '1')
  release.resolve()
  t.equal((await first).status, 200)
  const later = await post(proxy, body)
  t.equal(later.headers['idempotent-replayed'], 'true')
  t.equal(n, 1)
})

t.test('which answers are recorded: 2xx and 4xx but 401/408/409/425/429; 5xx and our own 502 are forwarded again', async (t) => {
  const { provider, proxy } = await rig(t)
  const hits = new Map<string, number>()
  provider.setUpstreamHandler((req, res, body) => {
    const status = Number(/"status":(\d+)/.exec(body.toString())?.[1] ?? 200)
    hits.set(body.toString(), (hits.get(body.toString()) ?? 0) + 1)
    if (status === 0) { req.socket.destroy(); return true }
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(`{"status":${status}}`)
    return true
  })
  // A 401 is retried once with a new token (a POST with a reference is safe to retry), so the
  // provider sees it twice per request: the count after the second request is compared with the first's.
  const cases: Array<[number, boolean]> = [[200, true], [204, true], [400, true], [404, true], [422, true], [401, false], [408, false], [409, false], [425, false], [429, false], [500, false], [503, false]]
  for (const [status, recorded] of cases) {
    const body = `{"externalReference":"rec-${status}","status":${status}}`
    const first = await post(proxy, body)
    t.equal(first.status, status, `${status} passed back`)
    const once = hits.get(body) ?? 0
    t.ok(once >= 1, `${status}: forwarded`)
    const second = await post(proxy, body)
    t.equal(second.status, status)
    t.equal(second.headers['idempotent-replayed'], recorded ? 'true' : undefined, `${status} ${recorded ? 'replayed' : 'forwarded again'}`)
    t.equal(hits.get(body), recorded ? once : 2 * once, `${status}: ${recorded ? 'not forwarded again' : 'forwarded again'}`)
  }
  const broken = '{"externalReference":"rec-reset","status":0}'
  await assertProxyError(t, await post(proxy, broken), 502, 'UPSTREAM_UNAVAILABLE', 'a reset upstream is our 502')
  await assertProxyError(t, await post(proxy, broken), 502, 'UPSTREAM_UNAVAILABLE', 'and the retry is forwarded again')
  t.equal(hits.get(broken), 2)
})

t.test('our own 504 is not recorded: the retry with the same reference is forwarded again', async (t) => {
  const { provider, proxy } = await rig(t, { PROXY_UPSTREAM_TIMEOUT_SECONDS: '1' })
  const hold = deferred()
  t.teardown(() => { hold.resolve() })
  let n = 0
  provider.setUpstreamHandler(async (_req, res) => {
    n++
    // The first never answers (cut off by the upstream timeout); the retry is answered.
    if (n === 1) await hold.promise
    else res.writeHead(201, { 'content-type': 'application/json' }).end('{"n":2}')
    return true
  })
  const body = '{"externalReference":"ref-504"}'
  await assertProxyError(t, await post(proxy, body), 504, 'UPSTREAM_TIMEOUT', 'an upstream that never answers is our 504')
  const retry = await post(proxy, body)
  t.equal(retry.status, 201, 'the retry is forwarded and answered')
  t.equal(retry.headers['idempotent-replayed'], undefined, 'not a replay of the 504')
  t.equal(n, 2)
})

t.test('our own 503 (no token yet) is not recorded: the retry is forwarded once a token comes', async (t) => {
  const provider = await startProvider(t)
  let tokens = false
  provider.setTokenHandler((_req, res) => {
    if (tokens) return false
    res.writeHead(500, { 'content-type': 'application/json' }).end('{"success":false}')
    return true
  })
  const proxy = await startProxy(t, providerEnv(provider, SANDBOX_ONLY), { random: () => 0 })
  const body = '{"externalReference":"ref-503"}'
  await assertProxyError(t, await post(proxy, body), 503, 'TOKEN_UNAVAILABLE', 'no token: our 503, after the claim')
  t.equal(provider.upstreamRequests.length, 0, 'nothing forwarded')
  tokens = true
  await waitReady(proxy, 10_000)
  const retry = await post(proxy, body)
  t.ok(retry.status >= 200 && retry.status < 300, `the retry is forwarded and answered (${retry.status})`)
  t.equal(retry.headers['idempotent-replayed'], undefined, 'not a replay of the 503')
  t.equal(provider.upstreamRequests.length, 1)
})

t.test('a 401 retried with a new token stays inside one claim and its answer is recorded', async (t) => {
  const { provider, proxy, hits } = await rig(t)
  provider.revokeAllTokens()
  const body = '{"externalReference":"ref-401"}'
  const first = await post(proxy, body)
  t.equal(first.status, 201, 'answered after the one retry')
  const again = await post(proxy, body)
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(again.body, first.body)
  t.equal(hits(), 1, 'the handler answered once (the 401 came from the token check before it)')
})

t.test('references are per method, path, environment and interface; the query is not part of it', async (t) => {
  const { proxy, hits } = await rig(t, {}, {}, true)
  const body = '{"externalReference":"ref-scope"}'
  await post(proxy, body)
  t.equal((await post(proxy, body, {}, `${PATH}?x=1`)).headers['idempotent-replayed'], 'true', 'another query replays')
  t.equal((await post(proxy, body, {}, '/sandbox/fiat/v1/payouts/other')).headers['idempotent-replayed'], undefined, 'another path is another record')
  t.equal((await post(proxy, body, {}, '/sandbox/crypto/v1/payouts')).headers['idempotent-replayed'], undefined, 'another interface is another record')
  t.equal((await post(proxy, body, {}, '/production/fiat/v1/payouts')).headers['idempotent-replayed'], undefined, 'another environment is another record')
  t.equal((await post(proxy, body, {}, '/production/fiat/v1/payouts')).headers['idempotent-replayed'], 'true', 'which replays in its turn')
  const put = await request(`${proxy.url}${PATH}`, { method: 'PUT', body, headers: { 'content-type': 'application/json' } })
  await put.body.text()
  t.equal(put.headers['idempotent-replayed'], undefined, 'another method is another record')
  t.equal(hits(), 5)
})

t.test('what the reference rules leave alone and what they refuse', async (t) => {
  const { proxy, hits } = await rig(t)
  const twice = async (body: string | Buffer, headers: Record<string, string> = {}): Promise<number> => {
    const before = hits()
    await post(proxy, body, headers)
    await post(proxy, body, headers)
    return hits() - before
  }
  t.equal(await twice('{"externalReference":""}'), 2, 'an empty reference is no reference')
  t.equal(await twice('{"externalReference":42}'), 2, 'a number is no reference')
  t.equal(await twice('{"other":"x"}'), 2, 'no reference')
  t.equal(await twice('not json'), 2, 'a body that is not JSON')
  t.equal(await twice(gzipSync('{"externalReference":"gz"}'), { 'content-encoding': 'gzip' }), 2, 'a compressed body is not read')
  t.equal(await twice('{"externalReference":"plain"}', { 'content-type': 'text/plain' }), 1, 'JSON sent as text/plain is still judged')
  const duplicated = await post(proxy, '{"externalReference":"a","externalReference":"b"}')
  await assertProxyError(t, duplicated, 400, 'EXTERNAL_REFERENCE_REQUIRED', 'a repeated reference member is refused')
  const get = await request(`${proxy.url}${PATH}`)
  await get.body.text()
  t.equal(get.statusCode, 201, 'GET is not judged')
})

t.test('a custom pointer, and a 10 KB reference never becomes a 10 KB key', async (t) => {
  // The real memory store, with every key it is asked to claim written down.
  const memory = createMemoryStore({ clock: systemClock })
  const claimed: string[] = []
  const store: StateStore = { ...memory, claim: async (key, ttlMs) => { claimed.push(key); return await memory.claim(key, ttlMs) } }
  const { proxy, hits } = await rig(t, { PROXY_IDEMPOTENCY_KEY_POINTER: '/meta/ref' }, { store })
  const long = 'x'.repeat(10_000)
  const body = JSON.stringify({ meta: { ref: long }, externalReference: 'ignored' })
  await post(proxy, body)
  t.equal((await post(proxy, body)).headers['idempotent-replayed'], 'true')
  t.equal(hits(), 1)
  t.equal(claimed.length, 2, 'both requests were claimed in the store')
  t.ok(claimed.every((key) => key.length <= 100), `every key is short (${claimed.map((k) => k.length).join(', ')} characters)`)
  t.notOk(claimed.some((key) => key.includes('xxxxxxxx') || key.includes('ignored')), 'no key holds the reference itself')
})

t.test('the same reference from two callers: two records, and neither caller receives the other\'s replay', async (t) => {
  const keys = { alpha: 'pak_alpha-caller-key-0123456789abcdefghijklmnopqrstu', beta: 'pak_beta-caller-key-0123456789abcdefghijklmnopqrstuv' }
  const dir = mkdtempSync(join(tmpdir(), 'idem-callers-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const file = join(dir, 'callers.yaml')
  writeFileSync(file, `callers:\n${Object.entries(keys).map(([id, key]) => `  - id: ${id}\n    keySha256: ${keySha256(key)}\n    allow: [{}]\n`).join('')}`)
  const { proxy, hits } = await rig(t, { PROXY_CALLERS_FILE: file })
  const body = '{"externalReference":"shared-ref","amount":"5.00"}'
  const alpha = await post(proxy, body, { authorization: `Bearer ${keys.alpha}` })
  const beta = await post(proxy, body, { authorization: `Bearer ${keys.beta}` })
  t.equal(beta.headers['idempotent-replayed'], undefined, 'beta is not answered from alpha\'s record')
  t.not(beta.body, alpha.body, 'beta got its own payout')
  t.equal(hits(), 2, 'both reached the provider')
  const alphaAgain = await post(proxy, body, { authorization: `Bearer ${keys.alpha}` })
  t.equal(alphaAgain.headers['idempotent-replayed'], 'true', 'alpha\'s retry replays alpha\'s record')
  t.equal(alphaAgain.body, alpha.body)
  const betaAgain = await post(proxy, body, { authorization: `Bearer ${keys.beta}` })
  t.equal(betaAgain.body, beta.body, 'and beta\'s replays beta\'s')
  t.equal(hits(), 2)
})

t.test('PROXY_IDEMPOTENCY=off forwards every duplicate', async (t) => {
  const { proxy, hits } = await rig(t, { PROXY_IDEMPOTENCY: 'off' })
  const body = '{"externalReference":"ref-off"}'
  const first = await post(proxy, body)
  const second = await post(proxy, body)
  t.equal(second.headers['idempotent-replayed'], undefined)
  t.not(second.body, first.body)
  t.equal(hits(), 2)
})

t.test('a retry sent the moment a streamed answer ends finds the record', async (t) => {
  const { provider, proxy } = await rig(t)
  let n = 0
  provider.setUpstreamHandler((_req, res) => {
    n++
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write('{"part":1,')
    setTimeout(() => res.end(`"n":${n}}`), 20)
    return true
  })
  const body = '{"externalReference":"ref-stream"}'
  const first = await post(proxy, body)
  const retry = await post(proxy, body)
  t.equal(retry.headers['idempotent-replayed'], 'true')
  t.equal(retry.body, first.body)
  t.equal(n, 1)
})

t.test('a client that leaves mid-answer does not stop the recording: its retry gets the whole answer', async (t) => {
  const { provider, proxy } = await rig(t)
  const rest = deferred()
  let n = 0
  provider.setUpstreamHandler((_req, res) => {
    n++
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write('{"first":"half",')
    void rest.promise.then(() => res.end('"second":"half"}'))
    return true
  })
  const body = '{"externalReference":"ref-leave"}'
  const controller = new AbortController()
  const res = await request(`${proxy.url}${PATH}`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, signal: controller.signal })
  const reader = res.body[Symbol.asyncIterator]()
  await reader.next()
  controller.abort()
  // The proxy has seen the client go (its connection closed, each listener of it told) before the rest of the answer comes.
  await eventually(async () => await connections(proxy.app.server) === 0, { what: 'the client\'s connection closed at the proxy' })
  rest.resolve()
  let replay = await post(proxy, body)
  await eventually(async () => {
    if (replay.status !== 409) return true
    replay = await post(proxy, body)
    return false
  }, { what: 'the claim to be settled', everyMs: 20 })
  t.equal(replay.headers['idempotent-replayed'], 'true')
  t.equal(replay.body, '{"first":"half","second":"half"}')
  t.equal(n, 1)
})

t.test('/readyz shows the store and metrics count the outcomes', async (t) => {
  const { proxy } = await rig(t)
  const body = '{"externalReference":"ref-m"}'
  await post(proxy, body)
  await post(proxy, body)
  await post(proxy, '{"externalReference":"ref-m","x":1}')
  const ready = await request(`${proxy.url}/readyz`)
  const json = await ready.body.json() as Record<string, unknown>
  t.same(json['state'], { ready: true })
  const metrics = await (await request(`${proxy.url}/metrics`)).body.text()
  t.match(metrics, /payments_auth_proxy_idempotency_outcomes_total\{outcome="replayed"\} 1/)
  t.match(metrics, /payments_auth_proxy_idempotency_outcomes_total\{outcome="reused"\} 1/)
  t.match(metrics, /payments_auth_proxy_idempotency_outcomes_total\{outcome="recorded"\} 1/)
  t.match(metrics, /payments_auth_proxy_state_store_up\{kind="memory"\} 1/)
})
