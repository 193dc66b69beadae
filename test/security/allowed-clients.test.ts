import t from 'tap'
import { createClientAccess } from '../../src/access/client-access.js'
import { loadConfig } from '../../src/load-config.js'
import { assertNothingForwarded, assertProxyError, assertStillServes, assertWarned, get, send, startRig } from './rig.js'

/**
 * SPEC §5 "Inbound access": only PROXY_ALLOWED_CLIENTS may use the proxy, judged on the socket's
 * peer address and never on a header. Both ends stay on loopback: 127.0.0.1 and 127.0.0.2 are
 * different peers to the proxy.
 */
t.test('a client outside PROXY_ALLOWED_CLIENTS gets 403 CLIENT_NOT_ALLOWED and nothing is forwarded', async (t) => {
  const rig = await startRig(t, { PROXY_ALLOWED_CLIENTS: '127.0.0.2/32' })
  const cases: Array<[string, string]> = [
    ['GET', get('/production/fiat/v1/payouts')],
    ['GET claiming 127.0.0.2 in forwarding headers', get('/production/fiat/v1/payouts', ['X-Forwarded-For: 127.0.0.2', 'X-Real-IP: 127.0.0.2', 'Forwarded: for=127.0.0.2'])],
    ['POST', 'POST /sandbox/fiat/v1/payouts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}'],
    ['token endpoint', get('/production/fiat/auth/generate-bearer-token')],
  ]
  for (const [label, bytes] of cases) {
    const res = await send(rig, bytes, { localAddress: '127.0.0.1' })
    await assertProxyError(t, res, 403, 'CLIENT_NOT_ALLOWED', label)
    assertNothingForwarded(t, rig, label)
    await assertStillServes(t, rig, label, { localAddress: '127.0.0.2' })
  }
  assertWarned(t, rig, 'client refused', 'refused client')
})

t.test('the default allows loopback only, the whole of 127.0.0.0/8', async (t) => {
  const rig = await startRig(t)
  await assertStillServes(t, rig, 'from 127.0.0.1', { localAddress: '127.0.0.1' })
  await assertStillServes(t, rig, 'from 127.0.0.2', { localAddress: '127.0.0.2' })
  const access = createClientAccess(rig.proxy.config)
  const loopbackHost = { host: 'localhost' }
  for (const peer of ['10.0.0.5', '192.168.1.10', '::ffff:10.0.0.5', 'fe80::1', '::2', '', undefined]) {
    t.equal(access.check(peer, loopbackHost).ok, false, `peer ${String(peer)} refused`)
  }
  for (const peer of ['127.0.0.1', '127.255.255.254', '::1', '::ffff:127.0.0.1']) {
    t.same(access.check(peer, loopbackHost), { ok: true }, `peer ${peer} allowed`)
  }
})

t.test('CIDRs in PROXY_ALLOWED_CLIENTS match IPv4, IPv4-mapped IPv6 and IPv6 peers', async (t) => {
  const { config } = loadConfig({
    PAYMENTS_FIAT_BASE_URL: 'https://fiat.example/api/b2b',
    PAYMENTS_SANDBOX_API_KEY: 'HC_k',
    PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk',
    PROXY_EGRESS_IP_URL: 'off',
    PROXY_ALLOWED_CLIENTS: '10.0.0.0/8, 192.168.1.7, fd00::/8',
  })
  const access = createClientAccess(config)
  const host = { host: 'localhost' }
  for (const peer of ['10.1.2.3', '::ffff:10.1.2.3', '192.168.1.7', 'fd00::1']) t.same(access.check(peer, host), { ok: true }, `${peer} allowed`)
  for (const peer of ['11.0.0.1', '192.168.1.8', 'fe00::1', '127.0.0.1', '::1']) t.equal(access.check(peer, host).ok, false, `${peer} refused`)
})

t.test('listening beyond loopback without widening PROXY_ALLOWED_CLIENTS warns with what to set', async (t) => {
  const base = { PAYMENTS_FIAT_BASE_URL: 'https://fiat.example/api/b2b', PAYMENTS_SANDBOX_API_KEY: 'HC_k', PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk', PROXY_EGRESS_IP_URL: 'off' }
  t.match(loadConfig({ ...base, PROXY_HOST: '0.0.0.0' }).warnings, [/PROXY_ALLOWED_CLIENTS/], 'wildcard bind, loopback clients')
  t.same(loadConfig({ ...base, PROXY_HOST: '0.0.0.0', PROXY_ALLOWED_CLIENTS: '10.0.0.0/8' }).warnings, [], 'clients widened')
  t.same(loadConfig({ ...base, PROXY_HOST: '127.0.0.1' }).warnings, [], 'loopback bind')
})
