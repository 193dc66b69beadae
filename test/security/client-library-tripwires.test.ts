import t from 'tap'
import { assertProxyError } from '../helpers/proxy-error.js'
import { assertStillServes, get, send, startRig } from './rig.js'
import { open, readResponse, request } from './raw-client.js'

/**
 * Headers that undici refuses outright (`Keep-Alive`, `Upgrade`, `Expect`, `TE` other than
 * trailers) used to reach it and come back as a 500 with the library's message. They belong to the
 * client's hop (RFC 9110 §7.6.1, §10.1.1): the request is forwarded without them.
 */
t.test('Keep-Alive, Upgrade, TE and Expect are handled and the request forwarded, never a 500', async (t) => {
  const rig = await startRig(t)
  const cases: string[][] = [
    ['Keep-Alive: timeout=5'],
    ['Connection: keep-alive', 'Keep-Alive: timeout=5, max=100'],
    ['Upgrade: h2c'],
    ['Connection: Upgrade, HTTP2-Settings', 'Upgrade: h2c', 'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA'],
    ['Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=='],
    ['TE: gzip'],
    ['TE: trailers, deflate;q=0.5'],
    ['Expect: 100-continue'],
  ]
  for (const headers of cases) {
    const label = headers.join(' | ')
    rig.provider.upstreamRequests.length = 0
    const res = await send(rig, get('/sandbox/fiat/v1/ping', headers))
    t.equal(res.status, 200, `${label}: forwarded`)
    t.equal(res.headers['x-proxy-error'], undefined, `${label}: the provider's answer, not one of ours`)
    t.match(JSON.parse(res.body), { success: true, environment: 'sandbox', method: 'GET' }, `${label}: the provider's echo of the forwarded request`)
    const [forwarded] = rig.provider.upstreamRequests
    for (const name of ['keep-alive', 'upgrade', 'te', 'expect', 'http2-settings']) t.equal(forwarded?.headers[name], undefined, `${label}: no ${name} upstream`)
    t.equal(forwarded?.tokenValid, true, `${label}: token arrived`)
    await assertStillServes(t, rig, label)
  }
})

t.test('Expect: 100-continue on a POST gets its 100 and the body arrives whole', async (t) => {
  const rig = await startRig(t)
  for (const contentType of ['application/json', 'application/octet-stream']) {
    // A reference per type: the same one again would be replayed from its record (SPEC §8).
    const body = `{"externalReference":"ref-${contentType}","amount":10}`
    rig.provider.upstreamRequests.length = 0
    const { socket } = open(rig.proxy.port)
    t.teardown(() => socket.destroy())
    socket.write(request('POST', '/sandbox/fiat/v1/payouts', ['Expect: 100-continue', `Content-Type: ${contentType}`, `Content-Length: ${body.length}`]))
    const interim = await new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1'))))
    t.match(interim, /^HTTP\/1\.1 100 Continue\r\n/, `${contentType}: 100 Continue before the body`)
    const response = readResponse(socket)
    socket.write(body)
    const answer = await response
    t.equal(answer.status, 200, `${contentType}: forwarded`)
    t.equal(answer.headers['x-proxy-error'], undefined, `${contentType}: the provider's answer, not one of ours`)
    const [forwarded] = rig.provider.upstreamRequests
    t.equal(forwarded?.body.toString('utf8'), body, `${contentType}: body byte for byte`)
    t.equal(forwarded?.headers.expect, undefined, `${contentType}: no Expect upstream`)
    await assertStillServes(t, rig, contentType)
  }
})

t.test('an Expect the proxy cannot meet gets 417, not a 500', async (t) => {
  const rig = await startRig(t)
  const res = await send(rig, request('POST', '/sandbox/fiat/v1/payouts', ['Expect: something-else', 'Content-Length: 2'], '{}'))
  await assertProxyError(t, res, 417, 'EXPECTATION_FAILED', 'Expect: something-else')
  t.same(rig.provider.upstreamRequests, [], 'nothing forwarded')
  await assertStillServes(t, rig, 'Expect: something-else')
})
