import t from 'tap'
import { unusableAtMs } from '../../src/tokens/refresh-policy.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { send, startTimed } from '../tokens/token-kit.js'
import { tokenOutage } from './token-faults.js'

t.test('past expiry during an outage requests get a fast 503 with Retry-After, and the proxy recovers by itself', async (t) => {
  const { driver, provider, proxy } = await startTimed(t)
  const grant = proxy.sources.get('sandbox')?.currentGrant()
  if (grant === undefined || grant === null) throw new Error('no start-up token')
  const outage = tokenOutage(provider)
  outage.on()
  await driver.advanceTo(unusableAtMs(grant) + 1_000)
  const attemptsSoFar = provider.tokenRequests.length

  // The proxy's clock is fake and stands still here: a refusal that waited on a timer (a retry, a
  // token request's deadline) would never be answered, so an answer at all is the proof that it
  // waited on nothing. Real milliseconds are reported only: a loaded machine stretches them.
  const clockBefore = driver.monotonicMs()
  const timings: number[] = []
  for (let i = 0; i < 20; i++) {
    const started = performance.now()
    const res = await send(proxy, '/sandbox/fiat/v1/a')
    timings.push(performance.now() - started)
    await assertProxyError(t, res, 503, 'TOKEN_UNAVAILABLE', `request ${i + 1}`)
    const retryAfter = Number(res.headers.get('retry-after'))
    t.ok(retryAfter >= 1 && retryAfter <= 60, `request ${i + 1}: Retry-After ${res.headers.get('retry-after')} within 1..60 s`)
  }
  t.comment(`time to 503 without a token: max ${Math.max(...timings).toFixed(1)} ms`)
  t.equal(driver.monotonicMs(), clockBefore, 'all 20 refused without the proxy clock moving: none waited on a timer')
  t.equal(provider.tokenRequests.length, attemptsSoFar, 'refused requests do not ask for tokens')
  t.equal(provider.upstreamRequests.filter((r) => !r.tokenValid).length, 0, 'no expired token was ever sent')

  const ready = await send(proxy, '/readyz')
  t.equal(ready.status, 503, '/readyz 503')
  t.match(JSON.parse(ready.body), { ready: false, environments: { sandbox: { ready: false, expiresAt: null } } })
  t.equal((await send(proxy, '/healthz')).status, 200, '/healthz stays 200')

  // Recovery: the next scheduled attempt, announced by Retry-After, gets a token.
  const retryAfterS = Number((await send(proxy, '/sandbox/fiat/v1/a')).headers.get('retry-after'))
  outage.off()
  const recoveredFrom = driver.monotonicMs()
  let recovered = false
  while (driver.monotonicMs() - recoveredFrom <= 60_000) {
    recovered = (await send(proxy, '/readyz')).status === 200
    if (recovered) break
    await driver.advance(1_000)
  }
  if (!recovered) {
    t.fail('not recovered within PROXY_TOKEN_RETRY_MAX_SECONDS (60 s simulated)')
    return
  }
  const recoverS = (driver.monotonicMs() - recoveredFrom) / 1000
  t.comment(`recovered ${recoverS} s (simulated) after the endpoint came back; Retry-After said ${retryAfterS}`)
  t.ok(recoverS <= retryAfterS, 'no later than Retry-After announced')
  t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200, 'requests succeed again without a restart')
  t.equal(outage.maxConcurrent, 1, 'never more than one token request in flight')
})

t.test('a token endpoint down at start: the proxy starts, is not ready, and refuses fast until it recovers', async (t) => {
  let outage: ReturnType<typeof tokenOutage> | undefined
  const { driver, provider, proxy } = await startTimed(t, { prepare: (p) => { outage = tokenOutage(p); outage.on() } })
  t.equal(provider.tokenRequests.length, 1, 'the start-up request was made and failed')
  t.equal((await send(proxy, '/healthz')).status, 200)
  t.equal((await send(proxy, '/readyz')).status, 503)
  const clockBefore = driver.monotonicMs()
  const res = await send(proxy, '/sandbox/fiat/v1/a')
  t.equal(driver.monotonicMs(), clockBefore, 'refused without the proxy clock moving: it waited on no timer')
  await assertProxyError(t, res, 503, 'TOKEN_UNAVAILABLE')
  outage?.off()
  await driver.advance(1_000)
  t.equal((await send(proxy, '/readyz')).status, 200, 'ready at the first retry after recovery')
})
