import t from 'tap'
import { startRig, send, get } from './rig.js'
import { request } from './raw-client.js'
t.test('probe', async (t) => {
  const rig = await startRig(t)
  const show = async (label: string, bytes: string) => {
    const res = await send(rig, bytes, { timeoutMs: 1500 }).catch((e) => ({ status: -1, headers: {} as Record<string, string>, body: String(e), raw: '' }))
    const up = rig.provider.upstreamRequests.map((r) => ({ url: r.url, h: r.headers }))
    t.comment(label, res.status, res.headers['x-proxy-error'], res.body.slice(0, 150), JSON.stringify(up), rig.provider.tokenRequests.length)
    rig.provider.upstreamRequests.length = 0
  }
  for (const target of ['/production/fiat/auth/generate-bearer-token.json', '/%70roduction/fiat/v1']) await show(target, get(target))
  const hs: string[][] = [
    ['Authorization: Bearer X'], ['Authorization: Bearer X', 'Authorization: Bearer Y'], ['Connection: close, authorization'],
    ['api-key: k1', 'api_key: k2', 'x-api-key: k3', 'Proxy-Authorization: Basic eA==', 'Cookie: a=b', 'X-API-KEY: k4', 'Apikey: k5'],
    ['X-Forwarded-For: 1.2.3.4', 'X-Forwarded-Host: evil', 'X-Forwarded-Proto: http', 'Forwarded: for=1.2.3.4', 'X-Real-IP: 1.2.3.4', 'Via: 1.1 evil'],
    ['TE: trailers', 'Trailer: x-t', 'Proxy-Connection: keep-alive', 'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA', 'Connection: x-secret', 'X-Secret: 1'],
    ['Keep-Alive: timeout=5'], ['Connection: keep-alive', 'Keep-Alive: timeout=5'], ['Upgrade: h2c'], ['Connection: Upgrade, HTTP2-Settings', 'Upgrade: h2c', 'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA'],
    ['Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=='],
    ['Expect: 100-continue'], ['Expect: something-else'], ['Origin: https://evil.example'], ['Origin: null'], ['Sec-Fetch-Site: cross-site'], ['Sec-Fetch-Site: same-origin'], ['Sec-Fetch-Site: none'],
  ]
  for (const h of hs) await show(h.join(' | '), get('/sandbox/fiat/v1/ping', h))
  await show('POST expect', request('POST', '/sandbox/fiat/v1/p', ['Expect: 100-continue', 'Content-Type: application/json', 'Content-Length: 2'], '{}'))
  await show('host evil', 'GET /sandbox/fiat/v1/ping HTTP/1.1\r\nHost: evil.example\r\n\r\n')
  await show('host localhost:8080', 'GET /sandbox/fiat/v1/ping HTTP/1.1\r\nHost: localhost:8080\r\n\r\n')
  await show('host [::1]', 'GET /sandbox/fiat/v1/ping HTTP/1.1\r\nHost: [::1]:1\r\n\r\n')
  await show('host LOCALHOST.', 'GET /sandbox/fiat/v1/ping HTTP/1.1\r\nHost: localhost.\r\n\r\n')
  await show('big header', get('/sandbox/fiat/v1/ping', ['X-Big: ' + 'a'.repeat(20 * 1024)]))
  await show('200 headers', get('/sandbox/fiat/v1/ping', Array.from({ length: 200 }, (_, i) => `X-H${i}: ${i}`)))
  await show('200 headers 100b', get('/sandbox/fiat/v1/ping', Array.from({ length: 200 }, (_, i) => `X-H${i}: ${'v'.repeat(100)}`)))
  await show('CL+TE', request('POST', '/sandbox/fiat/v1/p', ['Content-Length: 5', 'Transfer-Encoding: chunked'], '0\r\n\r\n'))
  await show('dup CL', request('POST', '/sandbox/fiat/v1/p', ['Content-Length: 2', 'Content-Length: 2'], '{}'))
  await show('dup CL diff', request('POST', '/sandbox/fiat/v1/p', ['Content-Length: 2', 'Content-Length: 3'], '{}x'))
  await show('CL +2', request('POST', '/sandbox/fiat/v1/p', ['Content-Length: +2'], '{}'))
  await show('CL 2,2', request('POST', '/sandbox/fiat/v1/p', ['Content-Length: 2, 2'], '{}'))
  await show('folded', request('GET', '/sandbox/fiat/v1/ping', ['X-A: a', ' folded']))
  await show('bare CR', request('GET', '/sandbox/fiat/v1/ping', ['X-A: a\rb']))
  await show('bare CR line', 'GET /sandbox/fiat/v1/ping HTTP/1.1\rHost: 127.0.0.1\r\n\r\n')
  await show('TE xchunked', request('POST', '/sandbox/fiat/v1/p', ['Transfer-Encoding: xchunked'], '0\r\n\r\n'))
  await show('TE chunked, identity', request('POST', '/sandbox/fiat/v1/p', ['Transfer-Encoding: chunked, identity'], '0\r\n\r\n'))
  await show('TE dup', request('POST', '/sandbox/fiat/v1/p', ['Transfer-Encoding: chunked', 'Transfer-Encoding: chunked'], '0\r\n\r\n'))
  await show('space before colon', request('GET', '/sandbox/fiat/v1/ping', ['Content-Length : 0']))
  await show('GET with body', request('GET', '/sandbox/fiat/v1/ping', ['Content-Length: 5'], 'hello'))
  await show('GET chunked body', request('GET', '/sandbox/fiat/v1/ping', ['Transfer-Encoding: chunked'], '5\r\nhello\r\n0\r\n\r\n'))
  await show('POST no CT', request('POST', '/sandbox/fiat/v1/p', ['Content-Length: 5'], 'hello'))
  await show('POST chunked no CT', request('POST', '/sandbox/fiat/v1/p', ['Transfer-Encoding: chunked'], '5\r\nhello\r\n0\r\n\r\n'))
  await show('DELETE body', request('DELETE', '/sandbox/fiat/v1/p', ['Content-Length: 5', 'Content-Type: text/plain'], 'hello'))
})
