import t from 'tap'
import { startRig, send, get } from './rig.js'
t.test('probe', async (t) => {
  const rig = await startRig(t)
  const targets = [
    '/production/fiat/../crypto/x', '/production/fiat/%2e%2e/crypto/x', '/production/fiat/.%2e/crypto/x', '/production/fiat/%2E%2E%2fcrypto/x',
    '/production/fiat/..\\crypto/x', '/production/fiat/..%5ccrypto/x', '/production/fiat/./auth/generate-bearer-token',
    '/production/fiat/%252e%252e/x', '/production/fiat/a%2fb', '//127.0.0.1:1/x', '/\\127.0.0.1:1/x', 'http://127.0.0.1:1/production/fiat/x',
    '/production/fiatX/v1', '/Production/Fiat/v1', '/%70roduction/fiat/v1', '/production/fiat/a%00b', '/production/fiat/a%0d%0ab', '/production/fiat/a#frag',
    '/production/fiat/a%', '/production/fiat/a%zz', '/production/fiat/%ef%bc%8e%ef%bc%8e/x', '/production/fiat/a%ef%bc%8eb',
    '/production/fiat/%61uth/generate-bearer-token', '/production/fiat/AUTH/GENERATE-BEARER-TOKEN', '/production/fiat/auth/generate-bearer-token/',
    '/production/fiat/auth//generate-bearer-token', '/production/fiat/auth/generate-bearer-token;x', '/production/fiat/x/../auth/generate-bearer-token',
    '/production/fiat/auth/generate-bearer-token.json', '/production/fiat/auth/generate-bearer-token%20', '/production/fiat/auth/generate-bearer-to%E2%84%AAen',
    '*', '/production/fiat/a b', '/production/fiat/a\tb', '/production/fiat/?a=%0d%0a', '/production/fiat/x?a#b', '/production/fiat/caf%C3%A9',
  ]
  for (const target of targets) {
    const res = await send(rig, get(target), 1500).catch((e) => ({ status: -1, headers: {} as Record<string, string>, body: String(e), raw: '' }))
    t.comment(JSON.stringify(target), res.status, res.headers['x-proxy-error'], res.body.slice(0, 120), JSON.stringify(rig.provider.upstreamRequests.map((r) => r.url)), rig.provider.tokenRequests.length)
    rig.provider.upstreamRequests.length = 0
  }
  for (const req of [
    'TRACE /production/fiat/x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    'CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n',
    'OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    'GET /production/fiat/x HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n',
    'GET /production/fiat/x HTTP/1.1\r\nConnection: close\r\n\r\n',
    'GET /production/fiat/x HTTP/1.0\r\n\r\n',
  ]) {
    const res = await send(rig, req).catch((e) => ({ status: -1, headers: {} as Record<string, string>, body: String(e), raw: '' }))
    t.comment(JSON.stringify(req.split('\r\n')[0]), res.status, res.headers['x-proxy-error'], res.body.slice(0, 120), JSON.stringify(rig.provider.upstreamRequests.map((r) => r.url)))
    rig.provider.upstreamRequests.length = 0
  }
})
