import t from 'tap'
import { request } from 'undici'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'

const MARKERS = {
  production: { apiKey: 'HC_MARKER_PROD_APIKEY_a1b2c3', publicKey: 'MARKER_PROD_PUBLICKEY_d4e5f6' },
  sandbox: { apiKey: 'HC_MARKER_SBX_APIKEY_g7h8i9', publicKey: 'MARKER_SBX_PUBLICKEY_j0k1l2' },
}

/**
 * The fake upstream echoes the headers it received, the token it was sent among them: that is the
 * provider's own answer. Everything else a client receives must hold no token.
 */
function withoutEcho (body: string): string {
  try {
    const parsed = JSON.parse(body) as { headers?: Record<string, unknown> }
    if (typeof parsed.headers?.['authorization'] !== 'string') return body
    parsed.headers['authorization'] = '[the token the provider received]'
    return JSON.stringify(parsed)
  } catch {
    return body
  }
}

t.test('a full run at LOG_LEVEL=trace logs no API key, public key or token', async (t) => {
  const provider = await startProvider(t, { credentials: MARKERS })
  const proxy = await startProxy(t, providerEnv(provider, {
    LOG_LEVEL: 'trace',
    PAYMENTS_PRODUCTION_API_KEY: MARKERS.production.apiKey,
    PAYMENTS_PRODUCTION_PUBLIC_KEY: MARKERS.production.publicKey,
    PAYMENTS_SANDBOX_API_KEY: MARKERS.sandbox.apiKey,
    PAYMENTS_SANDBOX_PUBLIC_KEY: MARKERS.sandbox.publicKey,
    PROXY_EGRESS_IP_URL: provider.ipEchoUrl,
    PROXY_TOKEN_RETRY_MIN_SECONDS: '1',
  }))
  await waitReady(proxy)
  const bodies: string[] = []
  const call = async (path: string, init: Parameters<typeof request>[1] = {}): Promise<number> => {
    const res = await request(proxy.url + path, init)
    bodies.push(JSON.stringify(res.headers) + withoutEcho(await res.body.text()))
    return res.statusCode
  }

  for (const path of ['/production/fiat/v1/a?x=1', '/sandbox/crypto/v1/b', '/fiat/v1/c']) await call(path, { headers: { authorization: 'Bearer client', 'api-key': MARKERS.production.apiKey } })
  await call('/production/fiat/v1/payouts', { method: 'POST', body: '{"externalReference":"r1"}', headers: { 'content-type': 'application/json' } })
  provider.revokeAllTokens()
  t.equal(await call('/production/fiat/v1/after-revoke'), 200, 'a 401 replaced the token and the retry succeeded')
  await call('/production/fiat/auth/generate-bearer-token', { method: 'POST' })
  await call('/nope')
  provider.setIpAllowlistEnforced(true)
  await call('/production/fiat/v1/payouts', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
  provider.setTokenHandler((_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end(`{"success":true,"token":"${MARKERS.sandbox.apiKey}","expiresAt":1}`); return true })
  provider.revokeAllTokens()
  await call('/sandbox/fiat/v1/after-bad-token')
  await call('/metrics')
  await call('/readyz')

  const logs = proxy.logs.lines.join('\n')
  t.equal(proxy.config.logLevel, 'trace')
  t.ok(proxy.logs.lines.length > 15, `captured ${proxy.logs.lines.length} log lines`)
  t.ok(proxy.logs.find('token refresh failed').length > 0, 'the bad token response was logged')
  const secrets = [MARKERS.production.apiKey, MARKERS.production.publicKey, MARKERS.sandbox.apiKey, MARKERS.sandbox.publicKey, ...provider.issuedTokens]
  t.ok(provider.issuedTokens.length >= 3, 'several tokens were issued during the run')
  for (const secret of secrets) {
    t.notOk(logs.includes(secret), `log lines do not contain ${secret.slice(0, 12)}...`)
  }
  const answered = bodies.join('\n')
  for (const secret of secrets) t.notOk(answered.includes(secret), `no response carries ${secret.slice(0, 12)}...`)
})
