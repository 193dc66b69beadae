import t, { type Test } from 'tap'
import type { OutgoingHttpHeaders } from 'node:http'
import { request } from 'undici'
import { assertProxyError } from '../helpers/proxy-error.js'
import { providerEnv, startProvider, startProxy, waitReady, type RunningProxy } from '../helpers/harness.js'
import type { FakeProvider } from '../../src/fake-provider/index.js'
import { SANDBOX_ONLY } from '../tokens/token-kit.js'
import { WHOLE_BODY_BYTES } from '../../src/routing/upstream-response.js'
import { deferred } from '../helpers/deferred.js'
import { eventually, HANG_MS } from '../helpers/eventually.js'

async function rig (t: Test): Promise<{ provider: FakeProvider, proxy: RunningProxy }> {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, SANDBOX_ONLY))
  await waitReady(proxy)
  return { provider, proxy }
}

function within<T> (promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, new Promise<T>((_resolve, reject) => setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms).unref())])
}

// Declared lengths over WHOLE_BODY_BYTES stream; at or under it the body is held (below).
const LONG_REST = 'w'.repeat(WHOLE_BODY_BYTES)
const FRAMINGS: Array<[string, number, OutgoingHttpHeaders, string]> = [
  ['200 with a Content-Length over the held size', 200, { 'content-type': 'application/json', 'content-length': 5 + LONG_REST.length }, LONG_REST],
  ['200 chunked', 200, { 'content-type': 'application/json' }, 'world'],
  ['403 with a Content-Length over the held size', 403, { 'content-type': 'application/json', 'content-length': 5 + LONG_REST.length }, LONG_REST],
  ['403 chunked', 403, { 'content-type': 'application/json' }, 'world'],
]

for (const [name, status, headers, restOfBody] of FRAMINGS) {
  t.test(`a body streams through as it arrives (${name}): the client reads its first part before the upstream sends the rest`, async (t) => {
    const { provider, proxy } = await rig(t)
    const { promise: restWanted, resolve: sendRest } = deferred()
    provider.setUpstreamHandler((req, res) => {
      if (!(req.url ?? '').endsWith('/trickle')) return false
      res.writeHead(status, headers)
      res.write('hello')
      void restWanted.then(() => res.end(restOfBody))
      return true
    })
    const res = await within(request(`${proxy.url}/sandbox/fiat/v1/trickle`), 3000, 'response headers')
    t.equal(res.statusCode, status)
    const chunks = res.body[Symbol.asyncIterator]()
    const first = await within(chunks.next(), 3000, 'first part')
    t.equal(Buffer.from(first.value as Buffer).toString(), 'hello', 'the first part, alone')
    sendRest()
    let rest = ''
    for (let next = await chunks.next(); next.done !== true; next = await chunks.next()) rest += Buffer.from(next.value as Buffer).toString()
    t.equal(rest, restOfBody, 'then the rest')
  })
}

for (const status of [200, 403]) {
  t.test(`a small body of declared length (${status}) is held until complete: sent whole, and a break in its middle is our 502`, async (t) => {
    const { provider, proxy } = await rig(t)
    provider.setUpstreamHandler((req, res) => {
      const url = req.url ?? ''
      if (!url.includes('/halves')) return false
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': 9, 'x-upstream-only': '1' })
      res.write('{"a":', () => {
        if (url.endsWith('/reset')) setTimeout(() => req.socket.destroy(), 50)
        else setTimeout(() => res.end('"b"}'), 50)
      })
      return true
    })
    const whole = await within(request(`${proxy.url}/sandbox/fiat/v1/halves`), 3000, 'response')
    t.equal(whole.statusCode, status)
    const chunks: string[] = []
    for await (const chunk of whole.body) chunks.push(Buffer.from(chunk as Buffer).toString())
    t.same(chunks, ['{"a":"b"}'], 'one piece, byte for byte')
    const broken = await within(request(`${proxy.url}/sandbox/fiat/v1/halves/reset`), 3000, 'answer')
    t.equal(broken.headers['x-upstream-only'], undefined, 'no header of the broken response')
    await assertProxyError(t, broken, 502, 'UPSTREAM_UNAVAILABLE')
    t.match(proxy.logs.find('upstream request failed'), [{ reqId: String }], 'logged with the request id')
  })
}

t.test('a client gone before the upstream answered (its POST body read in full) does not hold the upstream either', async (t) => {
  const { provider, proxy } = await rig(t)
  const { promise: closed, resolve: upstreamClosed } = deferred()
  const { promise: requestArrived, resolve: arrived } = deferred()
  provider.setUpstreamHandler((req, res) => {
    if (!(req.url ?? '').endsWith('/late-then-stalls')) return false
    arrived()
    res.once('close', () => { upstreamClosed() })
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 10 })
      res.write('{"a":')
    }, 300)
    return true
  })
  const controller = new AbortController()
  const pending = request(`${proxy.url}/sandbox/fiat/v1/late-then-stalls`, {
    method: 'POST', body: '{"externalReference":"r-1"}', headers: { 'content-type': 'application/json' }, signal: controller.signal,
  }).catch(() => null)
  await within(requestArrived, 3000, 'upstream request')
  controller.abort()
  await pending
  await within(closed, 3000, 'upstream release')
  t.pass('the upstream connection was closed, not held until the body timeout')
})

t.test('a client that leaves while a small body is held releases the upstream', async (t) => {
  const { provider, proxy } = await rig(t)
  const { promise: closed, resolve: upstreamClosed } = deferred()
  provider.setUpstreamHandler((req, res) => {
    if (!(req.url ?? '').endsWith('/stalls')) return false
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': 10 })
    res.write('{"a":')
    res.once('close', () => { upstreamClosed() })
    return true
  })
  const controller = new AbortController()
  const pending = request(`${proxy.url}/sandbox/fiat/v1/stalls`, { signal: controller.signal }).catch(() => null)
  await eventually(() => provider.upstreamRequests.some((r) => r.url.endsWith('/stalls')), { what: 'the stalling request upstream' })
  await new Promise((resolve) => setTimeout(resolve, 50))
  controller.abort()
  await pending
  await within(closed, 3000, 'upstream release')
  t.pass('the upstream connection was closed once the client left')
  t.equal((await request(`${proxy.url}/sandbox/fiat/v1/after`)).statusCode, 200, 'the proxy still serves the next request')
})

t.test('a small body that comes after its headers streams through; one that never comes is our 502', async (t) => {
  const { provider, proxy } = await rig(t)
  provider.setUpstreamHandler((req, res) => {
    const url = req.url ?? ''
    if (!url.includes('/late-body')) return false
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': 11, 'x-upstream-only': '1' })
    res.flushHeaders()
    if (url.endsWith('/never')) setTimeout(() => req.socket.destroy(), 50)
    else setTimeout(() => res.end('{"late":1}\n'), 50)
    return true
  })
  const late = await within(request(`${proxy.url}/sandbox/fiat/v1/late-body`), 3000, 'late body')
  t.equal(late.statusCode, 200)
  t.equal(late.headers['content-length'], '11')
  t.equal(await late.body.text(), '{"late":1}\n')
  const never = await within(request(`${proxy.url}/sandbox/fiat/v1/late-body/never`), 3000, 'answer')
  t.equal(never.headers['x-upstream-only'], undefined, 'no header of the broken response')
  await assertProxyError(t, never, 502, 'UPSTREAM_UNAVAILABLE')
})

t.test('answers without a body (HEAD, 304) pass through without waiting for one', async (t) => {
  const { provider, proxy } = await rig(t)
  provider.setUpstreamHandler((req, res) => {
    if (!(req.url ?? '').endsWith('/bodiless')) return false
    // undici refuses a 304 that declares a Content-Length (UND_ERR_RES_CONTENT_LENGTH_MISMATCH).
    const headers: OutgoingHttpHeaders = req.headers['x-status'] === '304' ? { etag: '"v1"' } : { 'content-type': 'application/json', 'content-length': 50, etag: '"v1"' }
    res.writeHead(req.headers['x-status'] === '304' ? 304 : 200, headers)
    res.end()
    return true
  })
  const head = await within(request(`${proxy.url}/sandbox/fiat/v1/bodiless`, { method: 'HEAD' }), 3000, 'HEAD answer')
  t.equal(head.statusCode, 200)
  t.equal(head.headers['content-length'], '50', 'HEAD keeps the declared length')
  await head.body.dump()
  const notModified = await within(request(`${proxy.url}/sandbox/fiat/v1/bodiless`, { headers: { 'x-status': '304' } }), 3000, '304 answer')
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.headers.etag, '"v1"')
  t.equal(await notModified.body.text(), '')
})

t.test('a body that arrives whole is passed back byte for byte with the upstream headers', async (t) => {
  const { provider, proxy } = await rig(t)
  const body = Buffer.from(`{"data":"${'é'.repeat(3000)}"}`)
  provider.setUpstreamHandler((req, res) => {
    if (!(req.url ?? '').endsWith('/whole')) return false
    res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, 'x-upstream': 'kept' })
    res.end(body)
    return true
  })
  const res = await request(`${proxy.url}/sandbox/fiat/v1/whole`)
  t.equal(res.statusCode, 201)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.headers['content-length'], String(body.length))
  t.equal(res.headers['x-upstream'], 'kept')
  t.ok(Buffer.from(await res.body.arrayBuffer()).equals(body), 'same bytes')
})

t.test('a small body without Content-Type comes back without one', async (t) => {
  const { provider, proxy } = await rig(t)
  provider.setUpstreamHandler((req, res) => {
    if (!(req.url ?? '').endsWith('/untyped')) return false
    res.writeHead(200, { 'content-length': 2 })
    res.end('OK')
    return true
  })
  const res = await request(`${proxy.url}/sandbox/fiat/v1/untyped`)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], undefined, 'no type added on the way')
  t.equal(await res.body.text(), 'OK')
})

t.test('a client that leaves in the middle of a large body is not logged as an upstream that broke off', async (t) => {
  const { provider, proxy } = await rig(t)
  const { promise: released, resolve: upstreamClosed } = deferred()
  provider.setUpstreamHandler((req, res) => {
    if (!(req.url ?? '').endsWith('/big-slow')) return false
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 1_000_000 })
    res.write(Buffer.alloc(64 * 1024, 'a'))
    res.once('close', () => { upstreamClosed() })
    return true
  })
  const res = await within(request(`${proxy.url}/sandbox/fiat/v1/big-slow`), 3000, 'response headers')
  const chunks = res.body[Symbol.asyncIterator]()
  await within(chunks.next(), 3000, 'first part')
  res.body.destroy()
  // The proxy destroys the upstream stream once the client is gone, and judges the stream's error
  // in the same turn (the error is emitted on the next tick): the upstream sees its connection
  // closed only after that.
  await within(released, HANG_MS, 'upstream release')
  t.same(proxy.logs.find('upstream response broke off after its headers: the client sees it cut'), [], 'no warning blaming the upstream')
  t.equal((await request(`${proxy.url}/sandbox/fiat/v1/after`)).statusCode, 200, 'the proxy still serves the next request')
})
