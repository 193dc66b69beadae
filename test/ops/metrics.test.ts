import t from 'tap'
import { request } from 'undici'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'
import { eventually } from '../helpers/eventually.js'

function sample (text: string, name: string, labels: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && labels.split(',').every((p) => l.includes(p)))
  return line === undefined ? null : Number(line.slice(line.lastIndexOf(' ') + 1))
}

t.test('metrics are exposed and move with requests, refreshes and IP_NOT_ALLOWED', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_EGRESS_IP_URL: provider.ipEchoUrl }))
  await waitReady(proxy)
  await eventually(() => proxy.egress.current() !== null, { what: 'the egress IP' })
  for (let i = 0; i < 3; i++) await (await request(`${proxy.url}/sandbox/fiat/v1/x`)).body.dump()
  provider.setIpAllowlistEnforced(true)
  await (await request(`${proxy.url}/production/fiat/v1/payouts`)).body.dump()

  const res = await request(`${proxy.url}/metrics`)
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /text\/plain/)
  const text = await res.body.text()
  t.equal(sample(text, 'payments_auth_proxy_requests_total', 'environment="sandbox",interface="fiat",status_class="2xx"'), 3)
  t.equal(sample(text, 'payments_auth_proxy_requests_total', 'environment="production",status_class="4xx"'), 1)
  t.equal(sample(text, 'payments_auth_proxy_token_refreshes_total', 'environment="production",outcome="success"'), 1)
  t.equal(sample(text, 'payments_auth_proxy_ip_not_allowed_total', 'environment="production",interface="fiat"'), 1)
  t.equal(sample(text, 'payments_auth_proxy_egress_ip_info', 'ip="203.0.113.7"'), 1)
  t.equal(sample(text, 'payments_auth_proxy_token_requests_in_flight', 'environment="sandbox"'), 0)
  const expiry = sample(text, 'payments_auth_proxy_token_expiry_seconds', 'environment="sandbox"') ?? 0
  t.ok(expiry > 7000 && expiry <= 7200, `seconds until expiry reported (${expiry})`)
  t.match(text, /payments_auth_proxy_upstream_duration_seconds_bucket\{/)
  t.match(text, /payments_auth_proxy_process_resident_memory_bytes/)
  for (const token of provider.issuedTokens) t.notOk(text.includes(token), 'no token in metrics')
})
