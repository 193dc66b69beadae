import t, { type Test } from 'tap'
import { DEFAULT_TOKEN_RETRY_MIN_S } from '../../src/config/schema.js'
import { unusableAtMs } from '../../src/tokens/refresh-policy.js'
import type { TokenGrant } from '../../src/tokens/token-grant.js'
import { bearerOf, send, startTimed, type TimedSetup } from '../tokens/token-kit.js'
import { tokenOutage } from './token-faults.js'

const MARGIN_MS = 300_000

function startGrant ({ proxy }: TimedSetup): TokenGrant {
  const grant = proxy.sources.get('sandbox')?.currentGrant()
  if (grant === undefined || grant === null) throw new Error('no start-up token')
  return grant
}

/** The token endpoint went down and the scheduled refresh failed a minute ago: the source backs off while its token still serves. */
async function startAfterFailedRefresh (t: Test): Promise<TimedSetup & { grant: TokenGrant, outage: ReturnType<typeof tokenOutage> }> {
  const setup = await startTimed(t)
  const grant = startGrant(setup)
  const outage = tokenOutage(setup.provider)
  outage.on()
  await setup.driver.advanceTo(grant.expiresAtMs - MARGIN_MS + 60_000)
  return { ...setup, grant, outage }
}

t.test('while the token endpoint is down the current token keeps serving and retries back off within its life', async (t) => {
  const setup = await startTimed(t)
  const { driver, provider, proxy } = setup
  const grant = startGrant(setup)
  const refreshAt = grant.expiresAtMs - MARGIN_MS
  const unusable = unusableAtMs(grant)
  const outage = tokenOutage(provider)
  outage.on()

  await driver.advanceTo(refreshAt - 1)
  provider.tokenRequests.length = 0
  for (let now = refreshAt - 1; now < unusable - 10_000; now += 10_000) {
    await driver.advanceTo(now)
    const burst = await Promise.all(Array.from({ length: 5 }, async () => await send(proxy, '/sandbox/fiat/v1/a')))
    if (burst.some((r) => r.status !== 200)) t.fail(`a request failed ${(unusable - now) / 1000} s before the deadline`)
  }
  await driver.advanceTo(unusable - 1)

  t.ok(provider.upstreamRequests.every((r) => r.tokenValid && bearerOf(r) === grant.token), 'every request went out with the current, valid token')
  // The provider clock is our fake wall clock, a fixed offset from the monotonic one here.
  const wallToMono = driver.monotonicMs() - driver.wallMs()
  const attempts = provider.tokenRequests.map((r) => r.at + wallToMono)
  t.equal(attempts[0], refreshAt, 'the first attempt is the scheduled refresh')
  const steps = attempts.slice(1).map((at, i) => ({ gap: at - (attempts[i] ?? 0), leftBefore: unusable - (attempts[i] ?? 0) }))
  t.same(steps.slice(0, 6).map((s) => s.gap), [500, 500, 1_000, 2_000, 4_000, 8_000], 'exponential backoff (jitter 0: the lower bound)')
  // PROXY_TOKEN_RETRY_MIN_SECONDS is 1 here: no step under half of it, even near the deadline.
  const retryMinMs = DEFAULT_TOKEN_RETRY_MIN_S * 1000
  for (const [i, { gap, leftBefore }] of steps.entries()) {
    if (gap > Math.max(leftBefore / 2, retryMinMs / 2) || gap > 60_000) t.fail(`step ${i} of ${gap} ms with ${leftBefore} ms left`)
    if (gap < retryMinMs / 2) t.fail(`step ${i} of ${gap} ms: closer than half of the retry minimum`)
  }
  const lastLeft = unusable - (attempts.at(-1) ?? 0)
  t.ok(lastLeft > 0 && lastLeft <= retryMinMs, `the last attempt is ${lastLeft} ms before the token stops serving`)
  t.ok(attempts.length <= 30, `${attempts.length} attempts over the ${MARGIN_MS / 1000} s margin`)
  t.equal(outage.maxConcurrent, 1, 'never more than one token request in flight')
  const line = proxy.logs.find('token refresh failed').at(-1)
  t.match(line, { reason: 'http_status', status: 503, holdingValidToken: true }, 'failures are logged as such')
})

t.test('when the token endpoint comes back, one request gets the new token: no burst', async (t) => {
  const { driver, provider, proxy, grant, outage } = await startAfterFailedRefresh(t)
  const duringOutage = provider.tokenRequests.length
  // Many requests waiting in the application cannot turn into token requests.
  const burst = await Promise.all(Array.from({ length: 50 }, async () => await send(proxy, '/sandbox/fiat/v1/a')))
  t.ok(burst.every((r) => r.status === 200), '50 concurrent requests served with the current token')
  t.equal(provider.tokenRequests.length, duringOutage, 'and none of them asked for a token')

  outage.off()
  await driver.advance(60_000)
  t.equal(provider.tokenRequests.length, duringOutage + 1, 'exactly one token request after recovery')
  const fresh = proxy.sources.get('sandbox')?.currentGrant()
  if (fresh === undefined || fresh === null) throw new Error('no token after recovery')
  t.not(fresh.token, grant.token, 'and it brought the new token')
  await driver.advance(fresh.expiresAtMs - MARGIN_MS - driver.monotonicMs() - 1)
  t.equal(provider.tokenRequests.length, duringOutage + 1, 'then nothing until the next scheduled refresh')
  t.equal(outage.maxConcurrent, 1)
  t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200)
})

t.test('an upstream 401 while refreshes are backing off asks for a new token at once', async (t) => {
  const { provider, proxy, outage } = await startAfterFailedRefresh(t)
  outage.off()
  provider.revokeAllTokens()
  const before = provider.tokenRequests.length
  const res = await send(proxy, '/sandbox/fiat/v1/a')
  t.equal(res.status, 200, 'the GET was retried with a new token instead of waiting out the backoff')
  t.equal(provider.tokenRequests.length, before + 1, 'exactly one token request')
})
