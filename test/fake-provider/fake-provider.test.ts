import t from 'tap'
import { createHash } from 'node:crypto'
import { DEMO_CREDENTIALS, startFakeProvider, verifyJwt } from '../../src/fake-provider/index.js'
import type { FakeProvider, ProviderEnvironment } from '../../src/fake-provider/index.js'

let clockMs = Date.UTC(2030, 0, 1, 12, 0, 0)
const provider = await startFakeProvider({ now: () => clockMs })
t.teardown(() => provider.close())
t.afterEach(() => provider.reset())

interface TokenResponse { success: boolean, token: string, expiresAt: number }

function tokenBase (p: FakeProvider, env: ProviderEnvironment): string {
  return env === 'production' ? p.fiatBaseUrl : p.fiatSandboxBaseUrl
}

async function requestToken (env: ProviderEnvironment, apiKey: string = DEMO_CREDENTIALS[env].apiKey): Promise<Response> {
  return await fetch(`${tokenBase(provider, env)}/auth/generate-bearer-token`, {
    method: 'POST',
    headers: { 'api-key': apiKey, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ publicKey: DEMO_CREDENTIALS[env].publicKey }),
  })
}

async function token (env: ProviderEnvironment): Promise<string> {
  return ((await (await requestToken(env)).json()) as TokenResponse).token
}

t.test('issues an HS256 JWT per environment with an integer expiresAt about one lifetime ahead', async (t) => {
  for (const env of ['production', 'sandbox'] as const) {
    const res = await requestToken(env)
    t.equal(res.status, 200)
    const body = await res.json() as TokenResponse
    t.equal(body.success, true)
    t.ok(Number.isInteger(body.expiresAt))
    t.equal(body.expiresAt, Math.floor(clockMs / 1000) + 7200)
    const [header, payload] = body.token.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>)
    t.same(header, { alg: 'HS256', typ: 'JWT' })
    t.match(payload, { env, exp: body.expiresAt, jti: String })
    t.equal(verifyJwt(body.token, 'not-the-secret'), null)
    t.ok(provider.issuedTokens.includes(body.token))
  }
  t.equal(provider.tokenRequests.length, 2)
  t.equal(provider.tokenRequests[0]?.headers['api-key'], DEMO_CREDENTIALS.production.apiKey)
})

t.test('rejects a wrong api key, malformed JSON and other methods', async (t) => {
  const wrong = await requestToken('production', DEMO_CREDENTIALS.sandbox.apiKey)
  t.equal(wrong.status, 401)
  t.same(await wrong.json(), { success: false, message: 'Invalid API key' })
  const url = `${provider.fiatBaseUrl}/auth/generate-bearer-token`
  const malformed = await fetch(url, { method: 'POST', headers: { 'api-key': DEMO_CREDENTIALS.production.apiKey }, body: '{' })
  t.equal(malformed.status, 400)
  t.equal((await fetch(url)).status, 405)
  t.equal(provider.tokenRequests.length, 3, 'rejected requests are recorded too')
})

t.test('retrieves the same token before half-life, issues a new one after', async (t) => {
  const first = await (await requestToken('sandbox')).json() as TokenResponse
  clockMs += 3000 * 1000
  t.same(await (await requestToken('sandbox')).json(), first)
  clockMs += 1000 * 1000
  const third = await (await requestToken('sandbox')).json() as TokenResponse
  t.not(third.token, first.token)
  t.equal(third.expiresAt, Math.floor(clockMs / 1000) + 7200)
})

t.test('upstreams echo authenticated requests and refuse others', async (t) => {
  const prod = await token('production')
  const body = JSON.stringify({ amount: 100, externalReference: 'ref-1' })
  const res = await fetch(`${provider.cryptoBaseUrl}/v1/payouts?a=1&b=%2F`, {
    method: 'POST', headers: { authorization: `Bearer ${prod}`, 'content-type': 'application/json' }, body,
  })
  t.equal(res.status, 200)
  t.equal(res.headers.get('x-fake-upstream'), 'crypto')
  t.equal(res.headers.get('set-cookie'), 'fake=1; HttpOnly')
  t.match(await res.json(), {
    success: true, environment: 'production', interface: 'crypto', method: 'POST', path: '/v1/payouts', query: 'a=1&b=%2F',
    bodyLength: body.length, bodySha256: createHash('sha256').update(body).digest('hex'), body,
  })

  const sandboxEcho = await fetch(`${provider.cryptoSandboxBaseUrl}/x`, { headers: { authorization: `Bearer ${await token('sandbox')}` } })
  t.match(await sandboxEcho.json(), { environment: 'sandbox', path: '/x' })

  t.equal((await fetch(`${provider.fiatBaseUrl}/v1/payouts`)).status, 401, 'no token')
  const wrongEnv = await fetch(`${provider.fiatSandboxBaseUrl}/v1/payouts`, { headers: { authorization: `Bearer ${prod}` } })
  t.equal(wrongEnv.status, 401, 'token of the other environment')
  t.same(await wrongEnv.json(), { success: false, message: 'Unauthorized' })
  t.equal((await fetch(`${provider.fiatOrigin}/elsewhere`)).status, 404)
  t.same(provider.upstreamRequests.map((r) => [r.environment, r.tokenValid]),
    [['production', true], ['sandbox', true], ['production', false], ['sandbox', false], [null, false]])

  clockMs += 7200 * 1000
  t.equal((await fetch(`${provider.cryptoBaseUrl}/v1`, { headers: { authorization: `Bearer ${prod}` } })).status, 401, 'expired')
})

t.test('revokeAllTokens invalidates issued tokens', async (t) => {
  const before = await token('production')
  provider.revokeAllTokens()
  t.equal((await fetch(`${provider.fiatBaseUrl}/v1`, { headers: { authorization: `Bearer ${before}` } })).status, 401)
  const after = await token('production')
  t.not(after, before)
  t.equal((await fetch(`${provider.fiatBaseUrl}/v1`, { headers: { authorization: `Bearer ${after}` } })).status, 200)
})

t.test('IP allowlist applies to production fiat only', async (t) => {
  provider.setIpAllowlistEnforced(true)
  const headers = { authorization: `Bearer ${await token('production')}` }
  const res = await fetch(`${provider.fiatBaseUrl}/v1/payouts`, { headers })
  t.equal(res.status, 403)
  t.match(await res.json(), { success: false, code: 'IP_NOT_ALLOWED' })
  t.equal((await fetch(`${provider.cryptoBaseUrl}/v1`, { headers })).status, 200)
})

t.test('fault injection handlers answer first or fall through', async (t) => {
  provider.setTokenHandler((req, res) => { res.writeHead(503).end(); return true })
  t.equal((await requestToken('production')).status, 503)
  provider.setUpstreamHandler(() => false)
  t.equal((await fetch(`${provider.fiatBaseUrl}/v1`, { headers: { authorization: 'Bearer x' } })).status, 401)
})

t.test('Date header follows the provider clock; ip echo answers the egress IP', async (t) => {
  const res = await fetch(provider.ipEchoUrl)
  t.equal(res.headers.get('date'), new Date(clockMs).toUTCString())
  t.equal(await res.text(), '203.0.113.7\n')
  provider.setEgressIp('198.51.100.9')
  t.equal(await (await fetch(provider.ipEchoUrl)).text(), '198.51.100.9\n')
  t.equal(provider.ipEchoRequests, 2)
})
