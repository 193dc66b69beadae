import t from 'tap'
import { brotliCompressSync, gzipSync } from 'node:zlib'
import { request } from 'undici'
import { agentOptions, TOKEN_LANE_CONNECTIONS } from '../../src/outbound/outbound-agents.js'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { eventually } from '../helpers/eventually.js'

t.test('the egress IP is logged at start with where to allowlist it, and in /readyz', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_EGRESS_IP_URL: provider.ipEchoUrl }))
  await eventually(() => proxy.logs.find('egress IP for allowlisting').length > 0, { what: 'egress log line' })
  const [line] = proxy.logs.find('egress IP for allowlisting')
  t.equal(line?.['egressIp'], '203.0.113.7')
  t.match(line?.['hint'], /Developers -> IP Addresses/)
  t.equal(line?.['level'], 30, 'at info')
  await waitReady(proxy)
  const ready = await (await request(`${proxy.url}/readyz`)).body.json() as { egressIp: string }
  t.equal(ready.egressIp, '203.0.113.7')
  const metrics = await (await request(`${proxy.url}/metrics`)).body.text()
  t.match(metrics, /payments_auth_proxy_egress_ip_info\{ip="203\.0\.113\.7"\} 1/)
  t.notMatch(metrics, /egress_ip_expected/, 'no egress_ip_expected series without PROXY_EXPECTED_EGRESS_IPS')
})

t.test('a change of egress IP is logged again as egress IP for allowlisting, at warn, with old and new address', async (t) => {
  const provider = await startProvider(t)
  const clock = new FakeClock()
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_EGRESS_IP_URL: provider.ipEchoUrl, PROXY_EGRESS_IP_INTERVAL_SECONDS: '60' }), { clock })
  await eventually(() => proxy.egress.current() === '203.0.113.7', { what: 'first egress IP' })
  provider.setEgressIp('198.51.100.9')
  await clock.advance(60_000)
  await eventually(() => proxy.egress.current() === '198.51.100.9', { what: 'second egress IP' })
  const lines = proxy.logs.find('egress IP for allowlisting')
  t.equal(lines.length, 2, 'once at start, once for the change')
  t.match(lines[0], { level: 30, egressIp: '203.0.113.7' })
  t.equal(lines[0]?.['previousEgressIp'], undefined, 'no previous address at first discovery')
  t.match(lines[1], { level: 40, egressIp: '198.51.100.9', previousEgressIp: '203.0.113.7', hint: /Developers -> IP Addresses/ })
  t.equal(provider.ipEchoRequests, 2, 'checked again after the interval, not before')
})

t.test('an unreachable echo service is a warning, never fatal; off disables the check', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_EGRESS_IP_URL: 'http://127.0.0.1:1/ip' }))
  await eventually(() => proxy.logs.find('egress IP check failed; will retry').length > 0, { what: 'failure warning' })
  t.equal(proxy.logs.find('egress IP check failed; will retry')[0]?.['level'], 40)
  await waitReady(proxy)
  const res = await request(`${proxy.url}/fiat/v1/x`)
  t.equal(res.statusCode, 200, 'the proxy serves without an egress IP')
  await res.body.dump()

  const off = await startProxy(t, providerEnv(provider))
  await waitReady(off)
  t.equal(provider.ipEchoRequests, 0, 'off: the echo service is never asked')
  t.equal(off.egress.current(), null)
})

t.test('an egress IP outside PROXY_EXPECTED_EGRESS_IPS is an error, in /readyz and metrics', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_EGRESS_IP_URL: provider.ipEchoUrl, PROXY_EXPECTED_EGRESS_IPS: '198.51.100.1' }))
  await eventually(() => proxy.egress.current() !== null, { what: 'egress IP' })
  t.equal(proxy.logs.find('egress IP is not in PROXY_EXPECTED_EGRESS_IPS: production fiat payouts will fail with IP_NOT_ALLOWED')[0]?.['level'], 50)
  await waitReady(proxy)
  const ready = await (await request(`${proxy.url}/readyz`)).body.json() as Record<string, unknown>
  t.equal(ready['egressIpExpected'], false)
  const metrics = await (await request(`${proxy.url}/metrics`)).body.text()
  t.match(metrics, /payments_auth_proxy_egress_ip_expected 0/)
})

t.test('IP_NOT_ALLOWED from an upstream is passed back unchanged and logged with the egress IP', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_EGRESS_IP_URL: provider.ipEchoUrl }))
  await waitReady(proxy)
  await eventually(() => proxy.egress.current() !== null, { what: 'egress IP' })
  provider.setIpAllowlistEnforced(true)
  const res = await request(`${proxy.url}/production/fiat/v1/payouts`, { method: 'POST', body: '{"amount":1}', headers: { 'content-type': 'application/json' } })
  t.equal(res.statusCode, 403)
  t.equal(res.headers['x-proxy-error'], undefined, 'the provider answer, not ours')
  t.equal(await res.body.text(), '{"success":false,"code":"IP_NOT_ALLOWED","message":"Request IP is not in the allowlist"}')
  const [line] = proxy.logs.find('upstream answered IP_NOT_ALLOWED')
  t.match(line, { level: 50, egressIp: '203.0.113.7', environment: 'production', interface: 'fiat' })
  t.match(line?.['hint'], /Developers -> IP Addresses/)
})

t.test('IP_NOT_ALLOWED is found in a chunked error body split across chunks and in a 401, never in a success body', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_EGRESS_IP_URL: provider.ipEchoUrl }))
  await waitReady(proxy)
  await eventually(() => proxy.egress.current() !== null, { what: 'egress IP' })
  provider.setUpstreamHandler((req, res) => {
    const url = req.url ?? ''
    if (url.endsWith('/chunked-403')) {
      res.writeHead(403, { 'content-type': 'application/json' })
      res.write('{"success":false,"code":"IP_NOT_')
      setTimeout(() => res.end('ALLOWED"}'), 20)
    } else if (url.endsWith('/as-401')) {
      res.writeHead(401, { 'content-type': 'application/json' })
      res.end('{"success":false,"code":"IP_NOT_ALLOWED"}')
    } else if (url.endsWith('/listing')) {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"success":true,"data":[{"status":"FAILED","reason":"IP_NOT_ALLOWED"}]}')
    } else {
      return false
    }
    return true
  })
  const logged = (): number => proxy.logs.find('upstream answered IP_NOT_ALLOWED').length
  const chunked = await request(`${proxy.url}/production/fiat/v1/chunked-403`)
  t.equal(chunked.statusCode, 403)
  t.equal(await chunked.body.text(), '{"success":false,"code":"IP_NOT_ALLOWED"}', 'passed back whole')
  t.equal(logged(), 1, 'a marker split across two chunks is found')
  const unauthorized = await request(`${proxy.url}/production/fiat/v1/as-401`, { method: 'POST', body: '{"amount":1}', headers: { 'content-type': 'application/json' } })
  t.equal(unauthorized.statusCode, 401, 'a 401 is still a 401 (SPEC: any 401 means the token was not accepted)')
  t.equal(await unauthorized.body.text(), '{"success":false,"code":"IP_NOT_ALLOWED"}')
  t.equal(logged(), 2, 'and its IP_NOT_ALLOWED is logged too')
  const listing = await request(`${proxy.url}/production/fiat/v1/listing`)
  t.equal(listing.statusCode, 200)
  await listing.body.text()
  t.equal(logged(), 2, 'a success body that mentions the code is data, not a refusal')
  t.match(proxy.logs.find('upstream answered IP_NOT_ALLOWED')[0], { level: 50, egressIp: '203.0.113.7' })
})

t.test('IP_NOT_ALLOWED is found in a compressed error body, which goes back as it came', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_EGRESS_IP_URL: provider.ipEchoUrl }))
  await waitReady(proxy)
  await eventually(() => proxy.egress.current() !== null, { what: 'egress IP' })
  const refusal = Buffer.from('{"success":false,"code":"IP_NOT_ALLOWED","message":"Request IP is not in the allowlist"}')
  const gzipped = gzipSync(refusal)
  const brotli = brotliCompressSync(refusal)
  provider.setUpstreamHandler((req, res) => {
    const url = req.url ?? ''
    if (url.endsWith('/gzip-403')) {
      res.writeHead(403, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': gzipped.length })
      res.end(gzipped)
    } else if (url.endsWith('/br-403-chunked')) {
      res.writeHead(403, { 'content-type': 'application/json', 'content-encoding': 'br' })
      res.write(brotli.subarray(0, 10))
      setTimeout(() => res.end(brotli.subarray(10)), 20)
    } else {
      return false
    }
    return true
  })
  const logged = (): number => proxy.logs.find('upstream answered IP_NOT_ALLOWED').length
  for (const [path, body, count] of [['/production/fiat/v1/gzip-403', gzipped, 1], ['/production/fiat/v1/br-403-chunked', brotli, 2]] as const) {
    const res = await request(`${proxy.url}${path}`, { headers: { 'accept-encoding': 'gzip, br' } })
    t.equal(res.statusCode, 403)
    t.ok(Buffer.from(await res.body.arrayBuffer()).equals(body), `${path}: the compressed bytes, unchanged`)
    t.equal(logged(), count, `${path}: logged`)
  }
})

t.test('outbound connections are pinned to IPv4 by default, configurable; token requests get their own pool and timeout', async (t) => {
  const pinned = agentOptions({ upstream: { timeoutS: 5, connections: 4, ipFamily: 'ipv4' }, token: { timeoutS: 2 } })
  const any = agentOptions({ upstream: { timeoutS: 5, connections: 4, ipFamily: 'any' }, token: { timeoutS: 2 } })
  for (const lane of ['upstream', 'tokens'] as const) {
    t.match(pinned[lane].connect, { family: 4, autoSelectFamily: false }, `${lane}: IPv4 only`)
    t.notMatch(any[lane].connect, { family: 4 }, `${lane}: any family when configured`)
  }
  t.match(pinned.upstream, { connections: 4, headersTimeout: 5000, bodyTimeout: 5000 }, 'upstream: its pool size and the upstream timeout')
  t.match(pinned.tokens, { connections: TOKEN_LANE_CONNECTIONS, headersTimeout: 2000, bodyTimeout: 2000 }, 'tokens: a pool of their own and the token timeout')
})
