import t from 'tap'
import { request } from 'undici'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'
import { eventually } from '../helpers/eventually.js'

t.test('/healthz answers 200 and /readyz reports each environment without a token', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_EGRESS_IP_URL: provider.ipEchoUrl }))
  await waitReady(proxy)
  const health = await request(`${proxy.url}/healthz`)
  t.equal(health.statusCode, 200)
  t.same(await health.body.json(), { status: 'ok' })

  await eventually(() => proxy.egress.current() !== null, { what: 'the egress IP' })
  const ready = await request(`${proxy.url}/readyz`)
  t.equal(ready.statusCode, 200)
  const text = await ready.body.text()
  const body = JSON.parse(text) as { ready: boolean, environments: Record<string, { ready: boolean, expiresAt: number }>, egressIp: string }
  t.equal(body.ready, true)
  t.same(Object.keys(body.environments).sort(), ['production', 'sandbox'])
  t.equal(body.environments['production']?.ready, true)
  t.ok(Number.isInteger(body.environments['production']?.expiresAt), 'expiresAt is the integer the provider sent')
  t.equal(body.egressIp, '203.0.113.7')
  for (const token of provider.issuedTokens) t.notOk(text.includes(token), 'no token in /readyz')
})

t.test('/readyz is 503 while an environment has no token', async (t) => {
  const provider = await startProvider(t)
  provider.setTokenHandler((_req, res) => { res.writeHead(500).end(); return true })
  const proxy = await startProxy(t, providerEnv(provider))
  await eventually(() => provider.tokenRequests.length >= 2, { what: 'both start-up token requests' })
  const ready = await request(`${proxy.url}/readyz`)
  t.equal(ready.statusCode, 503)
  const body = await ready.body.json() as { ready: boolean, environments: Record<string, { ready: boolean, expiresAt: null }> }
  t.equal(body.ready, false)
  t.same(body.environments['sandbox'], { ready: false, expiresAt: null })
  const health = await request(`${proxy.url}/healthz`)
  t.equal(health.statusCode, 200, 'liveness does not depend on the provider')
  await health.body.dump()
})

t.test('request id: a valid x-request-id is kept, forwarded and returned; a hostile one is replaced', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider))
  await waitReady(proxy)
  const res = await request(`${proxy.url}/fiat/v1/x`, { headers: { 'x-request-id': 'app-123.abc' } })
  t.equal(res.headers['x-request-id'], 'app-123.abc', 'returned to the client')
  const echo = await res.body.json() as { headers: Record<string, string> }
  t.equal(echo.headers['x-request-id'], 'app-123.abc', 'forwarded upstream')
  t.ok(proxy.logs.records.some((r) => r['reqId'] === 'app-123.abc' && r['msg'] === 'proxied request'), 'logged')

  const hostile = await request(`${proxy.url}/fiat/v1/x`, { headers: { 'x-request-id': 'x'.repeat(300) } })
  const generated = hostile.headers['x-request-id'] as string
  t.match(generated, /^[0-9a-f-]{36}$/, 'an over-long id is replaced by a UUID')
  t.equal((await hostile.body.json() as { headers: Record<string, string> }).headers['x-request-id'], generated)
})

t.test('one log line per proxied request, with the path but never the query', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider))
  await waitReady(proxy)
  await (await request(`${proxy.url}/production/crypto/v1/wallets?owner=alice`)).body.dump()
  const lines = proxy.logs.find('proxied request')
  t.equal(lines.length, 1)
  t.match(lines[0], { environment: 'production', interface: 'crypto', method: 'GET', path: '/api/v1/wallets', status: 200 })
  t.type(lines[0]?.['durationMs'], 'number')
  t.notOk(proxy.logs.lines.some((l) => l.includes('owner=alice')), 'query strings are not logged')
})
