import t from 'tap'
import type { IncomingHttpHeaders } from 'node:http'
import type { Test } from 'tap'
import { assertRefused, assertStillServes, get, send, startRig, type Rig } from './rig.js'

/** Sends one GET with `headers` and returns what the provider received; asserts it was forwarded once with the proxy's valid token. */
async function forwardedHeaders (t: Test, rig: Rig, headers: string[], label: string): Promise<IncomingHttpHeaders> {
  rig.provider.upstreamRequests.length = 0
  const res = await send(rig, get('/sandbox/fiat/v1/ping', headers))
  t.equal(res.status, 200, `${label}: forwarded`)
  t.equal(rig.provider.upstreamRequests.length, 1, `${label}: exactly one upstream request`)
  const [forwarded] = rig.provider.upstreamRequests
  t.equal(forwarded?.tokenValid, true, `${label}: the proxy's valid token arrived`)
  t.equal(rig.provider.tokenRequests.length, rig.startupTokenRequests, `${label}: no token request`)
  return forwarded?.headers ?? {}
}

t.test('client credentials and their look-alikes never reach the provider', async (t) => {
  const rig = await startRig(t)
  const sent = ['api-key: HC_client_key', 'api_key: HC_client_key', 'apikey: HC_client_key', 'x-api-key: HC_client_key', 'X-API-KEY: HC_client_key', 'x_api_key: HC_client_key', 'Proxy-Authorization: Basic Y2xpZW50OnNlY3JldA==', 'Cookie: session=client']
  const upstream = await forwardedHeaders(t, rig, sent, 'credentials')
  for (const name of ['api-key', 'api_key', 'apikey', 'x-api-key', 'x_api_key', 'proxy-authorization', 'cookie']) t.equal(upstream[name], undefined, `${name} dropped`)
  t.notMatch(JSON.stringify(upstream), /HC_client_key|Y2xpZW50|session=client/, 'no client credential anywhere upstream')
  await assertStillServes(t, rig, 'credentials')
})

t.test('forwarding and client identity headers are dropped, not passed on as the client wrote them', async (t) => {
  const rig = await startRig(t)
  const sent = ['X-Forwarded-For: 203.0.113.9', 'X-Forwarded-Host: evil.example', 'X-Forwarded-Proto: http', 'X-Forwarded-Port: 80', 'Forwarded: for=203.0.113.9;host=evil.example', 'X-Real-IP: 203.0.113.9', 'True-Client-IP: 203.0.113.9', 'Via: 1.1 evil']
  const upstream = await forwardedHeaders(t, rig, sent, 'forwarding')
  for (const name of ['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'forwarded', 'x-real-ip', 'true-client-ip', 'via']) t.equal(upstream[name], undefined, `${name} dropped`)
  t.notMatch(JSON.stringify(upstream), /203\.0\.113\.9|evil\.example/, 'no forged address or host upstream')
  t.match(upstream.host, /^127\.0\.0\.1:\d+$/, 'Host is the upstream\'s')
  await assertStillServes(t, rig, 'forwarding')
})

t.test('hop-by-hop headers (RFC 9110 §7.6.1) and Connection-listed names stay on the client hop', async (t) => {
  const rig = await startRig(t)
  const sent = ['TE: trailers', 'Trailer: X-Checksum', 'Proxy-Connection: keep-alive', 'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA', 'Connection: keep-alive, X-Client-Hop, x-other-hop', 'X-Client-Hop: 1', 'X-Other-Hop: 2', 'X-Business: kept']
  const upstream = await forwardedHeaders(t, rig, sent, 'hop-by-hop')
  for (const name of ['te', 'trailer', 'proxy-connection', 'http2-settings', 'x-client-hop', 'x-other-hop']) t.equal(upstream[name], undefined, `${name} dropped`)
  t.equal(upstream['x-business'], 'kept', 'an end-to-end header passes')
  await assertStillServes(t, rig, 'hop-by-hop')
})

t.test('path and method override headers are dropped, so neither the token-endpoint block nor the retry rules can be bypassed', async (t) => {
  const rig = await startRig(t)
  const sent = ['X-Original-URL: /api/sandbox/b2b/auth/generate-bearer-token', 'X-Rewrite-URL: /api/sandbox/b2b/auth/generate-bearer-token', 'X-HTTP-Method-Override: POST', 'X-HTTP-Method: POST', 'X-Method-Override: POST']
  const upstream = await forwardedHeaders(t, rig, sent, 'overrides')
  for (const name of ['x-original-url', 'x-rewrite-url', 'x-http-method-override', 'x-http-method', 'x-method-override']) t.equal(upstream[name], undefined, `${name} dropped`)
  await assertStillServes(t, rig, 'overrides')
})

t.test('an empty or unparsable Content-Type is a 400 INVALID_HEADERS, not a 500', async (t) => {
  const rig = await startRig(t)
  for (const value of ['', ';', '/']) {
    for (const method of ['PUT', 'POST']) {
      const label = `${method} with Content-Type "${value}"`
      await assertRefused(t, rig, `${method} /sandbox/fiat/v1/payouts HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${value}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`, 400, 'INVALID_HEADERS', label)
    }
  }
})
