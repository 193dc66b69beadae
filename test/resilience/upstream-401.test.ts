import t, { type Test } from 'tap'
import { sendJson } from '../../src/fake-provider/http-io.js'
import { FORCED_REFRESH_MIN_INTERVAL_MS, UNCONFIRMED_FORCED_REFRESHES } from '../../src/tokens/token-source.js'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'
import { SANDBOX_ONLY, bearerOf, send, startTimed } from '../tokens/token-kit.js'
import { deferred } from '../helpers/deferred.js'

async function ready (t: Test, env: Record<string, string> = {}): Promise<{ provider: Awaited<ReturnType<typeof startProvider>>, proxy: Awaited<ReturnType<typeof startProxy>> }> {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, { ...providerEnv(provider, SANDBOX_ONLY), ...env })
  await waitReady(proxy)
  return { provider, proxy }
}

const JSON_HEADERS = { 'content-type': 'application/json' }

const RETRIED: Array<[string, RequestInit]> = [
  ['GET', { method: 'GET' }],
  ['PUT', { method: 'PUT', headers: JSON_HEADERS, body: '{"amount":1}' }],
  ['DELETE', { method: 'DELETE' }],
  ['HEAD', { method: 'HEAD' }],
  ['OPTIONS', { method: 'OPTIONS' }],
  ['POST with externalReference', { method: 'POST', headers: JSON_HEADERS, body: '{"externalReference":"ord-42","amount":1}' }],
  ['PATCH with externalReference', { method: 'PATCH', headers: JSON_HEADERS, body: '{"externalReference":"ord-43"}' }],
  ['chunked POST with externalReference', { method: 'POST', headers: JSON_HEADERS, body: new Blob(['{"externalReference":"ord-44",', '"amount":1}']).stream(), duplex: 'half' }],
]

for (const [name, init] of RETRIED) {
  t.test(`a ${name} rejected with 401 is retried once with one new token`, async (t) => {
    const { provider, proxy } = await ready(t)
    const before = proxy.sources.get('sandbox')?.peek()
    provider.revokeAllTokens()
    const res = await send(proxy, '/sandbox/fiat/v1/payouts', init)
    t.equal(res.status, 200, 'the client sees the retried answer')
    t.equal(provider.upstreamRequests.length, 2, 'two upstream attempts, no more')
    const [first, second] = provider.upstreamRequests
    t.equal(bearerOf(first), before, 'the first with the revoked token')
    t.ok(second?.tokenValid === true && bearerOf(second) !== before, 'the second with a new, valid token')
    t.equal(second?.body.toString(), first?.body.toString(), 'the same body both times')
    t.equal(provider.tokenRequests.length, 2, 'one token request for the replacement')
  })
}

t.test('a POST without externalReference gets the 401 back; the next request uses the new token', async (t) => {
  const { provider, proxy } = await ready(t)
  provider.revokeAllTokens()
  const res = await send(proxy, '/sandbox/fiat/v1/payouts', { method: 'POST', headers: JSON_HEADERS, body: '{"amount":1}' })
  t.equal(res.status, 401, "the provider's 401 is passed back")
  t.same(JSON.parse(res.body), { success: false, message: 'Unauthorized' }, 'with its body')
  t.equal(res.headers.get('x-proxy-error'), null, 'not one of our errors')
  t.equal(provider.upstreamRequests.length, 1, 'not retried: paying twice is worse than a 401')
  await waitReady(proxy)
  t.equal((await send(proxy, '/sandbox/fiat/v1/payouts')).status, 200)
  t.equal(provider.upstreamRequests.at(-1)?.tokenValid, true, 'the next request carries the new token')
  t.equal(provider.tokenRequests.length, 2, 'the token was replaced once')
})

// SPEC §5: only a non-empty string at PROXY_IDEMPOTENCY_KEY_POINTER makes a POST or PATCH safe to send twice.
const NOT_RETRIED: Array<[string, Record<string, string>, RequestInit]> = [
  ['a number as externalReference', {}, { method: 'POST', headers: JSON_HEADERS, body: '{"externalReference":42,"amount":1}' }],
  ['an empty externalReference', {}, { method: 'PATCH', headers: JSON_HEADERS, body: '{"externalReference":""}' }],
  ['externalReference sent twice', {}, { method: 'POST', headers: JSON_HEADERS, body: '{"externalReference":"a","externalReference":"b"}' }],
  ['a gzip-encoded body', {}, { method: 'POST', headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' }, body: '{"externalReference":"ord-45"}' }],
  ['externalReference where the pointer names /meta/ref', { PROXY_IDEMPOTENCY_KEY_POINTER: '/meta/ref' }, { method: 'POST', headers: JSON_HEADERS, body: '{"externalReference":"ord-46"}' }],
]

for (const [name, env, init] of NOT_RETRIED) {
  t.test(`a POST or PATCH with ${name} is not retried after a 401`, async (t) => {
    const { provider, proxy } = await ready(t, { PROXY_IDEMPOTENCY: 'off', ...env })
    provider.revokeAllTokens()
    const res = await send(proxy, '/sandbox/fiat/v1/payouts', init)
    t.equal(res.status, 401, "the provider's 401 is passed back")
    t.equal(provider.upstreamRequests.length, 1, 'sent once')
  })
}

t.test('a POST with its reference at the configured pointer is retried after a 401', async (t) => {
  const { provider, proxy } = await ready(t, { PROXY_IDEMPOTENCY_KEY_POINTER: '/meta/ref' })
  provider.revokeAllTokens()
  const res = await send(proxy, '/sandbox/fiat/v1/payouts', { method: 'POST', headers: JSON_HEADERS, body: '{"meta":{"ref":"ord-47"},"amount":1}' })
  t.equal(res.status, 200, 'the client sees the retried answer')
  t.equal(provider.upstreamRequests.length, 2, 'two upstream attempts')
})

t.test('a token revoked again seconds later is replaced again (once per token, not once per interval)', async (t) => {
  const { provider, proxy } = await ready(t)
  for (let round = 1; round <= 3; round++) {
    provider.revokeAllTokens()
    t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200, `revocation ${round}: retried with a new token`)
    t.equal(provider.tokenRequests.length, 1 + round, `revocation ${round}: one token request`)
  }
  provider.revokeAllTokens()
  const unsafe = await send(proxy, '/sandbox/fiat/v1/payouts', { method: 'POST', headers: JSON_HEADERS, body: '{"amount":1}' })
  t.equal(unsafe.status, 401, 'a POST without externalReference gets the 401 back')
  await waitReady(proxy)
  provider.revokeAllTokens()
  t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200, 'a token rejected before its first use is replaced too')
  t.equal(provider.tokenRequests.length, 6)
})

t.test('a path that answers 401 to a token the endpoint keeps handing back cannot cause a refresh storm', async (t) => {
  const { provider, proxy } = await ready(t)
  provider.setUpstreamHandler((req, res) => {
    if (!(req.url ?? '').endsWith('/forbidden-as-401')) return false
    sendJson(res, 401, { success: false, message: 'Unauthorized' })
    return true
  })
  for (let i = 0; i < 5; i++) t.equal((await send(proxy, '/sandbox/fiat/v1/forbidden-as-401')).status, 401)
  t.equal(provider.tokenRequests.length, 1 + UNCONFIRMED_FORCED_REFRESHES, 'forced refreshes stop once they bring the same token back')
  t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200, 'the token still serves other paths')
  t.equal((await send(proxy, '/sandbox/fiat/v1/forbidden-as-401')).status, 401)
  t.equal(provider.tokenRequests.length, 1 + UNCONFIRMED_FORCED_REFRESHES, 'and that token being accepted elsewhere does not start them again')
})

t.test('a path that answers 401 whatever the token, with an endpoint that issues a new token every time, cannot cause a refresh storm', async (t) => {
  const { provider, proxy } = await ready(t)
  provider.setTokenHandler(() => { provider.revokeAllTokens(); return false })
  provider.setUpstreamHandler((req, res) => {
    if (!(req.url ?? '').endsWith('/business-401')) return false
    sendJson(res, 401, { success: false, message: 'Unauthorized' })
    return true
  })
  for (let i = 0; i < 10; i++) {
    t.equal((await send(proxy, '/sandbox/fiat/v1/business-401')).status, 401)
    t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200, 'other paths keep working')
  }
  t.equal(provider.tokenRequests.length, 1 + UNCONFIRMED_FORCED_REFRESHES, 'successes elsewhere do not vindicate the forced refreshes; only a retry that succeeds would')
})

t.test('concurrent 401s for the same token share one refresh', async (t) => {
  const { provider, proxy } = await ready(t)
  provider.revokeAllTokens()
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await send(proxy, '/sandbox/fiat/v1/a')))
  t.ok(answers.every((a) => a.status === 200), 'all 20 succeed after their retry')
  t.equal(provider.tokenRequests.length, 2, 'one token request for all of them')
  t.ok(provider.upstreamRequests.length <= 40, `${provider.upstreamRequests.length} upstream attempts, at most two each`)
})

t.test('a late 401 for a token already replaced does not drop the new one', async (t) => {
  const { provider, proxy } = await ready(t)
  // Holds the first /slow request (sent with the old token) until the token was replaced.
  const { promise: gate, resolve: releaseSlow } = deferred()
  const { promise: slowArrived, resolve: arrived } = deferred()
  let held = false
  provider.setUpstreamHandler(async (req, res) => {
    if (held || !(req.url ?? '').endsWith('/slow')) return false
    held = true
    arrived()
    await gate
    sendJson(res, 401, { success: false, message: 'Unauthorized' })
    return true
  })
  const slow = send(proxy, '/sandbox/fiat/v1/slow')
  await slowArrived
  provider.revokeAllTokens()
  t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200, 'a fast request meets the revocation and replaces the token')
  const replaced = proxy.sources.get('sandbox')?.peek()
  releaseSlow()
  t.equal((await slow).status, 200, 'the slow request is retried with the new token')
  t.equal(proxy.sources.get('sandbox')?.peek(), replaced, 'the new token was kept')
  t.equal(provider.tokenRequests.length, 2, 'no second replacement')
})

t.test('an upstream that answers 401 to everything cannot cause a refresh storm', async (t) => {
  const { driver, provider, proxy } = await startTimed(t)
  provider.setUpstreamHandler((_req, res) => { sendJson(res, 401, { success: false, message: 'Unauthorized' }); return true })
  for (let round = 1; round <= 3; round++) {
    provider.revokeAllTokens() // so every forced refresh really brings a new token
    for (let i = 0; i < 20; i++) t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 401)
    await driver.idle()
    // The first request's 401 and its retry's each replace their token; then one per interval.
    const forced = UNCONFIRMED_FORCED_REFRESHES + round - 1
    t.equal(provider.tokenRequests.length, 1 + forced, `round ${round}: ${forced} forced refreshes in all, then one per ${FORCED_REFRESH_MIN_INTERVAL_MS / 1000} s`)
    await driver.advance(FORCED_REFRESH_MIN_INTERVAL_MS)
  }
  t.ok(provider.upstreamRequests.length <= 3 * 21, `${provider.upstreamRequests.length} upstream attempts for 60 requests`)
})
