import t from 'tap'
import { loadConfig } from '../../src/load-config.js'
import { createClientAccess } from '../../src/access/client-access.js'
import { assertNothingForwarded, assertProxyError, assertStillServes, assertWarned, send, startRig, assertRefused } from './rig.js'

/**
 * SPEC §5 "Browser-safe": a web page on a developer's laptop must not be able to spend money
 * through the sidecar, neither by a cross-site request (it carries `Origin` / `Sec-Fetch-Site`)
 * nor by DNS rebinding (the page's own name, now resolving to 127.0.0.1, arrives as `Host`).
 */
const PAYOUT = ['Content-Type: application/json', 'Content-Length: 2']

function raw (host: string | null, headers: string[] = []): string {
  return [
    'POST /production/fiat/v1/payouts HTTP/1.1',
    ...(host === null ? [] : [`Host: ${host}`]),
    ...headers, ...PAYOUT, '', '{}',
  ].join('\r\n')
}

t.test('requests from web pages (Origin, Sec-Fetch-Site) get 403 CLIENT_NOT_ALLOWED', async (t) => {
  const rig = await startRig(t)
  const origin = `http://127.0.0.1:${rig.proxy.port}`
  const cases = [
    ['Origin: https://evil.example'],
    ['Origin: null'],
    [`Origin: ${origin}`],
    ['Origin:'],
    ['Sec-Fetch-Site: cross-site'],
    ['Sec-Fetch-Site: same-site'],
    ['Sec-Fetch-Site: same-origin'],
    ['Sec-Fetch-Site: cross-site', 'Sec-Fetch-Mode: no-cors'],
  ]
  for (const headers of cases) {
    const label = headers.join(' | ')
    await assertRefused(t, rig, raw('127.0.0.1', headers), 403, 'CLIENT_NOT_ALLOWED', label)
  }
  assertWarned(t, rig, 'client refused', 'browser requests')
})

t.test('DNS rebinding: a Host that is not an allowed name gets 403 CLIENT_NOT_ALLOWED', async (t) => {
  const rig = await startRig(t)
  const hosts = ['evil.example', 'evil.example:8080', 'localhost.', 'localhost.evil.example', '127.0.0.1.nip.io', '0.0.0.0', '10.0.0.1', '127.0.0.2', '[::2]', '2130706433', '']
  for (const host of hosts) {
    await assertRefused(t, rig, raw(host), 403, 'CLIENT_NOT_ALLOWED', `Host: ${host}`)
  }
  const http10 = await send(rig, 'POST /production/fiat/v1/payouts HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}')
  await assertProxyError(t, http10, 403, 'CLIENT_NOT_ALLOWED', 'HTTP/1.0 without Host')
  assertNothingForwarded(t, rig, 'HTTP/1.0 without Host')
})

t.test('loopback names and the listen address are allowed by default, in any case and with any port', async (t) => {
  const rig = await startRig(t)
  for (const host of ['127.0.0.1', '127.0.0.1:8080', 'localhost', 'LocalHost:8080', '[::1]', '[::1]:8080']) {
    rig.provider.upstreamRequests.length = 0
    const res = await send(rig, raw(host, ['Sec-Fetch-Site: none']))
    t.equal(res.status, 200, `Host: ${host}`)
    t.equal(rig.provider.upstreamRequests.length, 1, `Host: ${host} forwarded`)
  }
})

t.test('PROXY_ALLOWED_HOSTS adds names (e.g. the sidecar\'s service name) and nothing more', async (t) => {
  const rig = await startRig(t, { PROXY_ALLOWED_HOSTS: 'payments-proxy, Payments-Proxy.Default.svc' })
  for (const host of ['payments-proxy', 'payments-proxy:8080', 'payments-proxy.default.svc:8080', 'localhost']) {
    rig.provider.upstreamRequests.length = 0
    const res = await send(rig, raw(host))
    t.equal(res.status, 200, `Host: ${host}`)
    t.equal(rig.provider.upstreamRequests.length, 1, `Host: ${host} forwarded`)
  }
  rig.provider.upstreamRequests.length = 0
  for (const host of ['payments-proxy.evil.example', 'evil-payments-proxy', 'payments-proxy.default']) {
    const res = await send(rig, raw(host))
    await assertProxyError(t, res, 403, 'CLIENT_NOT_ALLOWED', `Host: ${host}`)
    assertNothingForwarded(t, rig, `Host: ${host}`)
  }
  const withOrigin = await send(rig, raw('payments-proxy', ['Origin: https://evil.example']))
  await assertProxyError(t, withOrigin, 403, 'CLIENT_NOT_ALLOWED', 'an allowed Host with an Origin')
  await assertStillServes(t, rig, 'PROXY_ALLOWED_HOSTS')
})

t.test('the listen address is an allowed Host name; a wildcard bind adds no name', async (t) => {
  const base = { PAYMENTS_FIAT_BASE_URL: 'https://fiat.example/api/b2b', PAYMENTS_SANDBOX_API_KEY: 'HC_k', PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk', PROXY_EGRESS_IP_URL: 'off' }
  const headers = (host: string): Record<string, string> => ({ host })
  const bound = createClientAccess(loadConfig({ ...base, PROXY_HOST: '10.1.2.3', PROXY_ALLOWED_CLIENTS: '10.0.0.0/8' }).config)
  t.same(bound.check('10.9.9.9', headers('10.1.2.3:8080')), { ok: true }, 'the listen address')
  t.equal(bound.check('10.9.9.9', headers('10.1.2.4:8080')).ok, false, 'another address')
  const wildcard = createClientAccess(loadConfig({ ...base, PROXY_HOST: '0.0.0.0', PROXY_ALLOWED_CLIENTS: '10.0.0.0/8' }).config)
  t.equal(wildcard.check('10.9.9.9', headers('0.0.0.0')).ok, false, '0.0.0.0 is no name')
  t.equal(wildcard.check('10.9.9.9', headers('10.1.2.3')).ok, false, 'nor any address of the host')
  t.same(wildcard.check('10.9.9.9', headers('localhost')), { ok: true }, 'loopback names stay allowed')
})
