import t, { type Test } from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Agent } from 'undici'
import type { Env } from '../../src/load-config.js'
import type { FakeProvider } from '../../src/fake-provider/index.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { providerEnv, startProvider, startProxy, waitReady, type RunningProxy } from '../helpers/harness.js'
import { SANDBOX_ONLY, send } from '../tokens/token-kit.js'
import { eventually, HANG_MS } from '../helpers/eventually.js'

const UPSTREAM_TIMEOUT_S = 1
/** What an error body must never reveal: addresses, ports, library and system error text. */
const LEAKS = ['127.0.0.1', 'ECONNREFUSED', 'ENOTFOUND', 'ECONNRESET', 'connect', 'socket', 'undici', 'UND_ERR', 'FST_', 'node_modules', 'node:', '.invalid']

async function rig (t: Test, env: Env = {}): Promise<{ provider: FakeProvider, proxy: RunningProxy }> {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { ...SANDBOX_ONLY, PROXY_UPSTREAM_TIMEOUT_SECONDS: String(UPSTREAM_TIMEOUT_S), ...env }), { random: () => 0 })
  await waitReady(proxy)
  return { provider, proxy }
}

async function closedPort (): Promise<number> {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** Requests the proxy has on their way upstream, sent and not answered or waiting to be sent (undici's own counts). */
function upstreamInFlight (proxy: RunningProxy): number {
  const stats = (proxy.outbound.upstream as Agent).stats as Record<string, { running: number, pending: number }>
  return Object.values(stats).reduce((n, s) => n + s.running + s.pending, 0)
}

function hits (provider: FakeProvider, suffix: string): number {
  return provider.upstreamRequests.filter((r) => r.url.endsWith(suffix)).length
}

async function assertOwnError (t: Test, res: { status: number, headers: Headers, body: string }, status: number, code: string, extraLeaks: string[] = []): Promise<void> {
  await assertProxyError(t, res, status, code)
  for (const leak of [...LEAKS, ...extraLeaks]) t.notOk(res.body.includes(leak), `no "${leak}" in the body`)
}

t.test('connection refused: 502 UPSTREAM_UNAVAILABLE without address or library text', async (t) => {
  const port = await closedPort()
  const { proxy } = await rig(t, { PAYMENTS_CRYPTO_BASE_URL: `http://127.0.0.1:${port}/api` })
  for (const init of [{ method: 'GET' }, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"externalReference":"r1"}' }]) {
    await assertOwnError(t, await send(proxy, '/sandbox/crypto/v1/a', init), 502, 'UPSTREAM_UNAVAILABLE', [String(port)])
  }
  t.match(proxy.logs.find('upstream request failed'), [{ reqId: String, level: 40, code: 'UPSTREAM_UNAVAILABLE' }], 'logged with the request id')
  t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200, 'the proxy still serves the next request')
})

t.test('DNS failure: 502 UPSTREAM_UNAVAILABLE without the host name', async (t) => {
  const { proxy } = await rig(t, { PAYMENTS_CRYPTO_BASE_URL: 'http://payments-upstream.invalid/api' })
  await assertOwnError(t, await send(proxy, '/sandbox/crypto/v1/a'), 502, 'UPSTREAM_UNAVAILABLE', ['payments-upstream'])
})

t.test('no response within PROXY_UPSTREAM_TIMEOUT_SECONDS: 504 UPSTREAM_TIMEOUT, and a POST is not retried', async (t) => {
  const { provider, proxy } = await rig(t)
  provider.setUpstreamHandler(async (req) => {
    if (!(req.url ?? '').endsWith('/hang')) return false
    await new Promise(() => {}) // never answers; the provider's close() destroys the socket
    return true
  })
  const inits = [{ method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"externalReference":"r1","amount":1}' }, { method: 'GET' }]
  await Promise.all(inits.map(async (init) => {
    const path = `/sandbox/fiat/v1/${init.method}/hang`
    const started = performance.now()
    const res = await send(proxy, path, init)
    const tookS = (performance.now() - started) / 1000
    await assertOwnError(t, res, 504, 'UPSTREAM_TIMEOUT')
    t.ok(tookS >= UPSTREAM_TIMEOUT_S * 0.9 && tookS < UPSTREAM_TIMEOUT_S + 1.5, `${init.method} answered after ${tookS.toFixed(2)} s`)
  }))
  // Nothing left on its way upstream: every attempt made has arrived (or a second one is counted).
  await eventually(() => upstreamInFlight(proxy) === 0 || inits.some(({ method }) => hits(provider, `/${method}/hang`) > 1), { what: 'no upstream request in flight', timeoutMs: HANG_MS })
  for (const { method } of inits) t.equal(hits(provider, `/${method}/hang`), 1, `${method}: exactly one upstream attempt`)
})

t.test('connection reset before the response: 502 UPSTREAM_UNAVAILABLE, no retry', async (t) => {
  const { provider, proxy } = await rig(t)
  provider.setUpstreamHandler((req) => {
    if (!(req.url ?? '').endsWith('/reset')) return false
    req.socket.destroy()
    return true
  })
  await assertOwnError(t, await send(proxy, '/sandbox/fiat/v1/reset'), 502, 'UPSTREAM_UNAVAILABLE')
  t.equal(hits(provider, '/reset'), 1, 'exactly one upstream attempt')
  t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200, 'the proxy still serves the next request')
})

t.test('connection reset in the middle of a large response: the client sees a cut stream, no retry', async (t) => {
  const { provider, proxy } = await rig(t)
  provider.setUpstreamHandler((req, res) => {
    if (!(req.url ?? '').endsWith('/cut')) return false
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 100_000 })
    res.write(Buffer.alloc(1_000, 'a'), () => { setTimeout(() => req.socket.destroy(), 20) })
    return true
  })
  let outcome: string
  try {
    const res = await fetch(`${proxy.url}/sandbox/fiat/v1/cut`)
    outcome = res.status === 502 ? '502' : `body of ${(await res.arrayBuffer()).byteLength} bytes`
  } catch {
    outcome = 'cut'
  }
  t.ok(outcome === '502' || outcome === 'cut', `the client learns the response broke (${outcome})`)
  t.equal(hits(provider, '/cut'), 1, 'exactly one upstream attempt')
  // Either way the break is logged at warn with the request id: as a failed request (502) or a cut stream.
  const logged = [...proxy.logs.find('upstream request failed'), ...proxy.logs.find('upstream response broke off after its headers: the client sees it cut')]
  t.match(logged, [{ level: 40, reqId: String }], `logged once with the request id (${outcome})`)
  t.equal(logged.length, 1)
  t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200, 'the proxy still serves the next request')
})

t.test('connection reset after the headers, before any body byte: 502 without the broken headers, no retry', async (t) => {
  const { provider, proxy } = await rig(t)
  provider.setUpstreamHandler((req, res) => {
    if (!(req.url ?? '').includes('/headers-only')) return false
    const status = (req.url ?? '').endsWith('/401') ? 401 : 200
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': 100_000, 'x-upstream-only': '1' })
    res.flushHeaders()
    setTimeout(() => req.socket.destroy(), 20)
    return true
  })
  const cases: Array<[string, RequestInit]> = [
    ['/sandbox/fiat/v1/headers-only/200', { method: 'GET' }],
    ['/sandbox/fiat/v1/headers-only/401', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"amount":1}' }],
  ]
  for (const [path, init] of cases) {
    const res = await send(proxy, path, init)
    await assertOwnError(t, res, 502, 'UPSTREAM_UNAVAILABLE')
    t.equal(res.headers.get('x-upstream-only'), null, 'no header of the broken response')
    t.equal(hits(provider, path.slice('/sandbox/fiat'.length)), 1, `${path}: exactly one upstream attempt`)
  }
  t.match(proxy.logs.find('upstream request failed'), [{ reqId: String }, { reqId: String }], 'each logged with its request id')
})

t.test('connection reset in the middle of a small response (BAD_INPUTS: reset mid-response): 502, no retry, logged with the request id', async (t) => {
  const { provider, proxy } = await rig(t)
  provider.setUpstreamHandler((req, res) => {
    const url = req.url ?? ''
    if (!url.includes('/cut-small')) return false
    res.writeHead(url.endsWith('/500') ? 500 : 200, { 'content-type': 'application/json', 'content-length': 200 })
    res.write('{"success":false,', () => { setTimeout(() => req.socket.destroy(), 20) })
    return true
  })
  for (const path of ['/sandbox/fiat/v1/cut-small/200', '/sandbox/fiat/v1/cut-small/500']) {
    await assertOwnError(t, await send(proxy, path), 502, 'UPSTREAM_UNAVAILABLE')
    t.equal(hits(provider, path.slice('/sandbox/fiat'.length)), 1, `${path}: exactly one upstream attempt`)
  }
  t.match(proxy.logs.find('upstream request failed'), [{ reqId: String }, { reqId: String }], 'each logged with its request id')
  t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200, 'the proxy still serves the next request')
})

t.test('a 401 whose body breaks off while its replacement token is fetched: 502, not a request left hanging', async (t) => {
  const { provider, proxy } = await rig(t)
  provider.setTokenHandler(async () => { await new Promise((resolve) => setTimeout(resolve, 300)); return false })
  provider.setUpstreamHandler((req, res) => {
    if (!(req.url ?? '').endsWith('/cut-401')) return false
    res.writeHead(401, { 'content-type': 'application/json', 'content-length': 100, 'x-upstream-only': '1' })
    res.write('{"success":false,', () => { setTimeout(() => req.socket.destroy(), 20) })
    return true
  })
  const res = await send(proxy, '/sandbox/fiat/v1/cut-401', { signal: AbortSignal.timeout(5000) })
  await assertOwnError(t, res, 502, 'UPSTREAM_UNAVAILABLE')
  t.equal(res.headers.get('x-upstream-only'), null, 'no header of the broken response')
  t.equal(hits(provider, '/cut-401'), 1, 'exactly one upstream attempt')
})

t.test('an upstream 503 with Retry-After is passed back after exactly one attempt', async (t) => {
  const { provider, proxy } = await rig(t)
  provider.setUpstreamHandler((req, res) => {
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"success":false,"message":"maintenance"}')
    return true
  })
  for (const method of ['GET', 'HEAD', 'OPTIONS']) {
    const before = provider.upstreamRequests.length
    const res = await send(proxy, '/sandbox/fiat/v1/a', { method })
    t.equal(res.status, 503, `${method}: 503 passed back`)
    t.equal(res.headers.get('retry-after'), '1', `${method}: with its Retry-After`)
    t.equal(res.headers.get('x-proxy-error'), null, `${method}: as the provider's answer`)
    t.equal(provider.upstreamRequests.length - before, 1, `${method}: exactly one upstream attempt`)
  }
  t.equal((await send(proxy, '/sandbox/fiat/v1/a')).body, '{"success":false,"message":"maintenance"}', 'body unchanged')
})

t.test('an upstream 302 to another host is passed back, never followed', async (t) => {
  const elsewhere: string[] = []
  const other = http.createServer((req, res) => { elsewhere.push(req.url ?? ''); res.end() })
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { other.closeAllConnections(); other.close(() => resolve()) }))
  const location = `http://127.0.0.1:${(other.address() as AddressInfo).port}/elsewhere`
  const { provider, proxy } = await rig(t)
  provider.setUpstreamHandler((_req, res) => { res.writeHead(302, { location, 'content-length': 0 }).end(); return true })
  const res = await send(proxy, '/sandbox/fiat/v1/a')
  t.equal(res.status, 302)
  t.equal(res.headers.get('location'), location, 'Location passed back unchanged')
  t.equal(provider.upstreamRequests.length, 1, 'one upstream attempt')
  t.same(elsewhere, [], 'the other host was never contacted')
})
