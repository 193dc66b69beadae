import t from 'tap'
import type { TokenHandler } from '../../src/fake-provider/index.js'
import { send, startTimed } from './token-kit.js'

const HOUR_MS = 3_600_000

/**
 * The most stubborn "generates or retrieves" provider: it hands back the token it issued, with
 * the same expiresAt, until that token has expired (the fake provider on its own issues a new one
 * past half-life). Each new token is the fake provider's own answer, captured on its way out, so
 * the fake upstreams accept it.
 */
function retrieveUntilExpiry (): TokenHandler {
  let held: { body: string, expiresAt: number } | null = null
  return (_req, res) => {
    const nowS = Date.parse(String(res.getHeader('date'))) / 1000
    if (held !== null && nowS < held.expiresAt) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(held.body)
      return true
    }
    const end = res.end.bind(res)
    res.end = ((body: string) => {
      held = { body, expiresAt: (JSON.parse(body) as { expiresAt: number }).expiresAt }
      return end(body)
    }) as typeof res.end
    return false
  }
}

t.test('a refresh that hands back the same token and expiresAt does not loop', async (t) => {
  const { driver, provider, proxy } = await startTimed(t, { tokenLifetimeSeconds: 3600, prepare: (p) => { p.setTokenHandler(retrieveUntilExpiry()) } })
  const statuses = new Map<number, number>()
  for (let elapsed = 0; elapsed < 2 * HOUR_MS; elapsed += 10_000) {
    const { status } = await send(proxy, '/sandbox/fiat/v1/a')
    statuses.set(status, (statuses.get(status) ?? 0) + 1)
    await driver.advance(10_000)
  }
  const times = provider.tokenRequests.map((r) => r.at)
  const gaps = times.slice(1).map((at, i) => at - (times[i] ?? 0))
  t.comment(`token requests over 2 simulated hours: ${times.length}; shortest gap ${Math.min(...gaps)} ms; answers ${JSON.stringify([...statuses])}`)
  t.ok(times.length <= 2 * 20, `${times.length} token requests <= 20 per token life`)
  t.ok(Math.min(...gaps) >= 100, 'never two token requests within 100 ms')
  t.ok(provider.upstreamRequests.every((r) => r.tokenValid), 'no expired token was sent')
  t.ok(new Set(provider.upstreamRequests.map((r) => r.headers.authorization)).size >= 2, 'the token was replaced once the provider issued a new one')
  t.same([...statuses.keys()].filter((s) => s !== 200 && s !== 503), [], 'only 200, or 503 in the seconds between the safety window and the provider issuing a new token')
  t.ok((statuses.get(200) ?? 0) >= 715, `${statuses.get(200) ?? 0} of 720 requests succeeded`)
})

t.test('the held token handed back before half-life is kept, and the switch is tried half-way to its end', async (t) => {
  // 10 s tokens: the proxy refreshes at half of its believed 9 s, the provider retrieves until 5 s.
  const { driver, provider, proxy } = await startTimed(t, { tokenLifetimeSeconds: 10 })
  const source = proxy.sources.get('sandbox')
  const first = source?.currentGrant()
  if (first === undefined || first === null) throw new Error('no start-up token')
  await driver.advance(4_500)
  t.equal(provider.tokenRequests.length, 2, 'refresh at 4.5 s')
  t.equal(source?.peek(), first.token, 'handed back the same token: kept')
  t.match(proxy.logs.find('token endpoint returned the token already held'), [{ level: 20 }], 'noted at debug level')
  // Half of what is left until the token stops being handed out (8.55 s): (8.55 - 4.5) / 2.
  await driver.advance(2_024)
  t.equal(provider.tokenRequests.length, 2, 'no immediate retry')
  t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200, 'requests meanwhile do not trigger one either')
  t.equal(provider.tokenRequests.length, 2)
  await driver.advance(1)
  t.equal(provider.tokenRequests.length, 3, 'one more request at 6.525 s')
  t.not(source?.peek(), first.token, 'which gets the new token, 2 s before the old one stops serving')
})
