import t from 'tap'
import { assertNothingForwarded, assertStillServes, send, startRig, startForeignHost } from './rig.js'
import { exchange, request } from './raw-client.js'

t.test('TRACE is not proxied: it would echo the injected token back', async (t) => {
  const rig = await startRig(t)
  for (const target of ['/production/fiat/v1', '/fiat/v1', '/production/fiat/']) {
    const res = await send(rig, request('TRACE', target, ['Authorization: Bearer client']))
    t.equal(res.status, 405, `TRACE ${target}: 405`)
    t.equal(res.headers['x-proxy-error'], 'METHOD_NOT_ALLOWED', `TRACE ${target}: the proxy answered`)
    t.notMatch(res.body, /Bearer/, `TRACE ${target}: no token echoed`)
    assertNothingForwarded(t, rig, `TRACE ${target}`)
    await assertStillServes(t, rig, `TRACE ${target}`)
  }
})

t.test('CONNECT opens no tunnel, neither to another host nor to the provider', async (t) => {
  const foreign = await startForeignHost(t)
  const rig = await startRig(t)
  const provider = new URL(rig.provider.fiatBaseUrl).host
  for (const authority of [foreign.host, provider]) {
    const label = `CONNECT ${authority}`
    // Without a 'connect' listener Node would close the socket with no answer at all.
    const res = await exchange(rig.proxy.port, `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`)
    t.equal(res.status, 405, `${label}: 405`)
    t.equal(res.headers['x-proxy-error'], 'METHOD_NOT_ALLOWED', `${label}: the proxy answered`)
    t.same(JSON.parse(res.body), { error: { code: 'METHOD_NOT_ALLOWED', message: 'Method CONNECT is not proxied' } }, `${label}: the proxy's error body`)
    assertNothingForwarded(t, rig, label)
    await assertStillServes(t, rig, label)
  }
  t.equal(foreign.connections(), 0, 'the CONNECT target never got a connection')
})

t.test('OPTIONS * (asterisk-form) gets a 4xx and is not forwarded', async (t) => {
  const rig = await startRig(t)
  const res = await send(rig, 'OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  t.equal(res.status, 400, 'status')
  t.equal(res.headers['x-proxy-error'], 'INVALID_PATH', 'x-proxy-error')
  assertNothingForwarded(t, rig, 'OPTIONS *')
  await assertStillServes(t, rig, 'OPTIONS *')
})
