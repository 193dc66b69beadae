import { createHash, randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import t from 'tap'
import { request } from 'undici'
import { assertProxyError } from '../helpers/proxy-error.js'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'

interface Echo { environment: string, interface: string, method: string, path: string, query: string, headers: Record<string, string>, bodyLength: number, bodySha256: string, body: string | null }

t.test('each route reaches its base path with its environment token', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider))
  await waitReady(proxy)
  const cases = [
    ['/production/fiat/v1/a', 'production', 'fiat'],
    ['/sandbox/fiat/v1/a', 'sandbox', 'fiat'],
    ['/production/crypto/v1/a', 'production', 'crypto'],
    ['/sandbox/crypto/v1/a', 'sandbox', 'crypto'],
    ['/fiat/v1/a', 'sandbox', 'fiat'],
    ['/crypto/v1/a', 'sandbox', 'crypto'],
  ] as const
  for (const [path, environment, iface] of cases) {
    const res = await request(proxy.url + path)
    t.equal(res.statusCode, 200, path)
    const echo = await res.body.json() as Echo
    t.equal(echo.environment, environment, `${path} environment`)
    t.equal(echo.interface, iface, `${path} interface`)
    t.equal(echo.path, '/v1/a', `${path} path under the base`)
  }
  t.equal(provider.tokenRequests.length, 2, 'one token per environment')
  const received = provider.upstreamRequests.map((r) => r.url)
  t.same(received, [
    '/api/b2b/v1/a', '/api/sandbox/b2b/v1/a', '/api/v1/a', '/api/sandbox/v1/a', '/api/sandbox/b2b/v1/a', '/api/sandbox/v1/a',
  ], 'the upstreams saw the base paths of SPEC §3')
  t.ok(provider.upstreamRequests.every((r) => r.tokenValid), 'every request carried a token valid for its environment')
})

t.test('query strings, methods and a 1 MiB body pass through byte for byte', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider))
  await waitReady(proxy)
  const query = 'b=2&a=1&a=%2F&empty=&plus=a+b&star=*&enc=%E2%82%AC&flag'
  const res = await request(`${proxy.url}/sandbox/fiat/v1/items?${query}`)
  t.equal((await res.body.json() as Echo).query, query, 'query string unchanged, order and encoding kept')

  const body = randomBytes(1024 * 1024)
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
    const sent = await request(`${proxy.url}/sandbox/fiat/v1/upload`, { method, body, headers: { 'content-type': 'application/octet-stream' } })
    t.equal(sent.statusCode, 200, `${method} 1 MiB accepted`)
    const echo = await sent.body.json() as Echo
    t.equal(echo.method, method)
    t.equal(echo.bodyLength, body.length, `${method} length`)
    t.equal(echo.bodySha256, createHash('sha256').update(body).digest('hex'), `${method} bytes identical`)
  }

  const json = '{"amount": 100,\n "__proto__": {"x": 1}, "externalReference": "r-1", "n": 1.000}'
  // application/json has a parser entry of its own (a cache hit in Fastify); every other type goes
  // through the catch-all: the body is the same bytes either way. A reference per type: the same
  // one again would be answered from the idempotency record (SPEC §8), not forwarded.
  for (const contentType of ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'text/plain', 'application/x-www-form-urlencoded']) {
    const sent = json.replace('r-1', `r-${contentType}`)
    const posted = await request(`${proxy.url}/fiat/v1/payouts`, { method: 'POST', body: sent, headers: { 'content-type': contentType } })
    const echo = await posted.body.json() as Echo
    t.equal(echo.body, sent, `${contentType}: body neither parsed nor re-serialised`)
    t.equal(echo.headers['content-type'], contentType, `${contentType}: content type forwarded as sent`)
  }

  // Without a type, whether held or streamed, the bytes are the client's: reply-from would
  // JSON-encode a held body sent without a content type. The provider's type is added (SPEC §1).
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
    const untyped = await request(`${proxy.url}/fiat/v1/payouts`, { method, body: 'hello world' })
    const echo = await untyped.body.json() as Echo
    t.equal(echo.body, 'hello world', `${method} without Content-Type: body unchanged`)
    t.equal(echo.headers['content-type'], 'application/json', `${method} without Content-Type: the provider's added`)
  }
  // Bodyless requests get it too, and nothing that would announce a body.
  for (const method of ['GET', 'DELETE', 'HEAD'] as const) {
    const bodyless = await request(`${proxy.url}/fiat/v1/payouts`, { method })
    const seen = provider.upstreamRequests.at(-1)
    await bodyless.body.dump()
    t.equal(seen?.headers['content-type'], 'application/json', `${method} without a body: Content-Type application/json upstream`)
    t.equal(seen?.headers['content-length'], undefined, `${method} without a body: no Content-Length upstream`)
    t.equal(seen?.headers['transfer-encoding'], undefined, `${method} without a body: no Transfer-Encoding upstream`)
  }
  const untypedChunked = await request(`${proxy.url}/fiat/v1/payouts`, { method: 'POST', body: Readable.from([Buffer.from('{"externalReference":'), Buffer.from('"r-2"}')]) })
  t.equal((await untypedChunked.body.json() as Echo).body, '{"externalReference":"r-2"}', 'chunked, without Content-Type: body unchanged')

  async function * chunks (): AsyncGenerator<Buffer> {
    for (let i = 0; i < 8; i++) yield body.subarray(i * 4096, (i + 1) * 4096)
  }
  const streamed = await request(`${proxy.url}/fiat/v1/stream`, { method: 'POST', body: Readable.from(chunks()), headers: { 'content-type': 'application/octet-stream' } })
  const echo = await streamed.body.json() as Echo
  t.equal(echo.bodySha256, createHash('sha256').update(body.subarray(0, 8 * 4096)).digest('hex'), 'chunked body streamed through intact')
})

t.test('upstream status, headers and body come back unchanged', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider))
  await waitReady(proxy)
  const res = await request(`${proxy.url}/fiat/v1/echo`)
  t.equal(res.headers['x-fake-upstream'], 'fiat')
  t.equal(res.headers['set-cookie'], 'fake=1; HttpOnly')
  t.equal(res.headers['x-proxy-error'], undefined, 'provider answers carry no x-proxy-error')
  await res.body.dump()

  provider.setUpstreamHandler((_req, res) => {
    res.writeHead(422, { 'content-type': 'application/json', 'x-provider-trace': 'abc' })
    res.end('{"success":false,"message":"invalid amount"}')
    return true
  })
  const failed = await request(`${proxy.url}/fiat/v1/payouts`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
  t.equal(failed.statusCode, 422)
  t.equal(failed.headers['x-provider-trace'], 'abc')
  t.equal(await failed.body.text(), '{"success":false,"message":"invalid amount"}')
})

t.test('the client credentials never reach an upstream; the API key goes only to the token endpoint', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider))
  await waitReady(proxy)
  const res = await request(`${proxy.url}/production/fiat/v1/balance`, {
    headers: { authorization: 'Bearer client-token', 'api-key': 'HC_client_key', 'x-api-key': 'HC_client_key2', cookie: 'session=1', 'x-forwarded-for': '10.9.9.9' },
  })
  const echo = await res.body.json() as Echo
  t.match(echo.headers['authorization'], /^Bearer ey/, 'the proxy token replaced the client one')
  t.notOk(JSON.stringify(echo.headers).includes('client'), 'no client credential forwarded')
  t.equal(echo.headers['cookie'], undefined)
  t.equal(echo.headers['x-forwarded-for'], undefined)
  const apiKeys = [proxy.config.environments.production?.credentials.apiKey, proxy.config.environments.sandbox?.credentials.apiKey] as string[]
  for (const r of provider.upstreamRequests) {
    const all = JSON.stringify(r.headers) + r.body.toString('latin1')
    t.notOk(apiKeys.some((k) => all.includes(k)), `no API key sent to ${r.url}`)
  }
  t.ok(provider.tokenRequests.every((r) => r.headers['api-key'] !== undefined), 'token requests carry the api-key header')
})

t.test('short routes without a default environment answer ENVIRONMENT_NOT_CONFIGURED', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_DEFAULT_ENVIRONMENT: undefined }))
  const res = await request(`${proxy.url}/fiat/v1/balance`)
  const body = await assertProxyError(t, res, 404, 'ENVIRONMENT_NOT_CONFIGURED')
  t.match(body?.error.message, /PROXY_DEFAULT_ENVIRONMENT/)
  t.equal(provider.upstreamRequests.length, 0)
})

t.test('an environment without credentials answers ENVIRONMENT_NOT_CONFIGURED; unknown paths ROUTE_NOT_FOUND', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PAYMENTS_PRODUCTION_API_KEY: undefined, PAYMENTS_PRODUCTION_PUBLIC_KEY: undefined, PROXY_DEFAULT_ENVIRONMENT: undefined }))
  const res = await request(`${proxy.url}/production/fiat/v1/balance`)
  const body = await assertProxyError(t, res, 404, 'ENVIRONMENT_NOT_CONFIGURED')
  t.match(body?.error.message, /PAYMENTS_PRODUCTION_API_KEY/)
  for (const path of ['/', '/v1/balance', '/production/fiatX/v1', '/Production/Fiat/v1', '/staging/fiat/v1']) {
    await assertProxyError(t, await request(proxy.url + path), 404, 'ROUTE_NOT_FOUND', path)
  }
  t.equal(provider.upstreamRequests.length, 0)
})

t.test('query strings written by qs and axios (brackets, braces, pipes) pass through unchanged', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider))
  await waitReady(proxy)
  const query = 'filter[status]=paid&ids[]=1&ids[]=2&q={a:1}&sort=a|b&x=^~'
  const res = await request(`${proxy.url}/fiat/v1/payouts?${query}`)
  t.equal(res.statusCode, 200)
  t.equal((await res.body.json() as Echo).query, query)
})

t.test('a body sent to an unconfigured environment gets ENVIRONMENT_NOT_CONFIGURED, whatever its type', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PAYMENTS_PRODUCTION_API_KEY: undefined, PAYMENTS_PRODUCTION_PUBLIC_KEY: undefined }))
  for (const contentType of ['text/xml', 'application/json']) {
    const res = await request(`${proxy.url}/production/fiat/v1/payouts`, { method: 'POST', body: '{not json', headers: { 'content-type': contentType } })
    await assertProxyError(t, res, 404, 'ENVIRONMENT_NOT_CONFIGURED', contentType)
  }
})
