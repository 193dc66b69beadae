import t from 'tap'
import { bearerOf, send, startTimed } from './token-kit.js'

const MARGIN_MS = 300_000

// lifetime s, expected refresh after the token was requested (ms): the 300 s margin, clamped to
// half of a short token's life; the lifetime the proxy believes is 1 s shorter (Date resolution).
const LIFETIMES: Array<[string, number, number]> = [
  ['2 h', 7200, 7_199_000 - MARGIN_MS],
  ['1 h', 3600, 3_599_000 - MARGIN_MS],
  ['10 s', 10, 9_000 / 2],
]

for (const [name, lifetimeS, refreshAfterMs] of LIFETIMES) {
  t.test(`a ${name} token is refreshed just inside the margin and not just outside it`, async (t) => {
    const { driver, provider, proxy } = await startTimed(t, { tokenLifetimeSeconds: lifetimeS })
    const source = proxy.sources.get('sandbox')
    const first = source?.currentGrant()
    if (first === undefined || first === null) throw new Error('no start-up token')
    t.equal(first.lifetimeS, lifetimeS - 1, 'lifetime judged from expiresAt and the Date header')
    t.equal(provider.tokenRequests.length, 1)

    await driver.advanceTo(first.obtainedAtMs + refreshAfterMs - 1)
    t.equal(provider.tokenRequests.length, 1, '1 ms outside the margin: no token request')
    const before = await send(proxy, '/sandbox/fiat/v1/a')
    t.equal(before.status, 200)
    t.equal(bearerOf(provider.upstreamRequests.at(-1)), first.token, 'the first token still serves')

    await driver.advance(1)
    t.equal(provider.tokenRequests.length, 2, 'at the margin: one token request')
  })

  t.test(`a ${name} token is replaced before it expires, over three lifetimes, without extra requests`, async (t) => {
    const { driver, provider, proxy } = await startTimed(t, { tokenLifetimeSeconds: lifetimeS })
    const stepMs = lifetimeS * 1000 / 20
    const seen = new Set<string>()
    for (let elapsed = 0; elapsed < 3 * lifetimeS * 1000; elapsed += stepMs) {
      const res = await send(proxy, '/sandbox/fiat/v1/a')
      if (res.status !== 200) t.fail(`request at ${elapsed} ms answered ${res.status}`)
      seen.add(bearerOf(provider.upstreamRequests.at(-1)) ?? '')
      await driver.advance(stepMs)
    }
    t.ok(provider.upstreamRequests.every((r) => r.tokenValid), 'no expired token reached the upstream')
    t.ok(seen.size >= 3, `${seen.size} different tokens were used`)
    // The start-up request, then one per refresh interval; a 10 s token is refreshed at half of
    // its believed life, just before the provider's half-life, so the provider first hands back
    // the same token ("retrieves") and the next request gets the new one: two per interval.
    const perRefresh = lifetimeS === 10 ? 2 : 1
    const bound = 1 + Math.floor(3 * lifetimeS * 1000 / refreshAfterMs) * perRefresh
    t.ok(provider.tokenRequests.length <= bound, `${provider.tokenRequests.length} token requests <= ${bound}`)
  })
}

t.test('a small margin still refreshes before the token stops being handed out, so no request waits', async (t) => {
  const { driver, provider, proxy } = await startTimed(t, { env: { PROXY_TOKEN_REFRESH_MARGIN_SECONDS: '0' } })
  const first = proxy.sources.get('sandbox')?.currentGrant()
  if (first === undefined || first === null) throw new Error('no start-up token')
  // The proxy stops handing out a token 2 s before its believed expiry; the refresh comes first.
  await driver.advanceTo(first.expiresAtMs - 2_001)
  t.equal(provider.tokenRequests.length, 2, 'refreshed before the safety window')
  t.not(proxy.sources.get('sandbox')?.peek(), first.token, 'and already switched')
  t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200)
})
