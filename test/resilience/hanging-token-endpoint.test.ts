import t from 'tap'
import { startProvider, startProxy, providerEnv, waitReady } from '../helpers/harness.js'
import { SANDBOX_ONLY, send } from '../tokens/token-kit.js'
import { hangingTokenEndpoint } from './token-faults.js'

// Real time: the point is that a socket which never answers is cut off by the token timeout.
const TOKEN_TIMEOUT_S = 1

t.test('a token endpoint that accepts and never answers is cut off after PROXY_TOKEN_TIMEOUT_SECONDS', async (t) => {
  const provider = await startProvider(t)
  const hang = hangingTokenEndpoint(provider)
  hang.on()
  const startedMs = performance.now()
  const proxy = await startProxy(t, providerEnv(provider, { ...SANDBOX_ONLY, PROXY_TOKEN_TIMEOUT_SECONDS: String(TOKEN_TIMEOUT_S) }), { random: () => 0 })
  t.same(proxy.logs.find('token refresh failed'), [], 'listening while the start-up token request still hangs')
  t.equal((await send(proxy, '/healthz')).status, 200, '/healthz 200 meanwhile')
  t.equal((await send(proxy, '/readyz')).status, 503, '/readyz 503 meanwhile')

  // Requests wait for the one in-flight token request, bounded by its timeout.
  const waiting = await Promise.all(Array.from({ length: 10 }, async () => {
    const sent = performance.now()
    const res = await send(proxy, '/sandbox/fiat/v1/a')
    return { res, ms: performance.now() - sent, endMs: performance.now() - startedMs }
  }))
  t.ok(waiting.every(({ res }) => res.status === 503 && res.headers.get('x-proxy-error') === 'TOKEN_UNAVAILABLE'), 'waiting requests get 503 TOKEN_UNAVAILABLE')
  const lastEndS = Math.max(...waiting.map((w) => w.endMs)) / 1000
  t.comment(`waiting requests answered ${lastEndS.toFixed(2)} s after start`)
  t.ok(lastEndS >= TOKEN_TIMEOUT_S * 0.9, 'not before the token request was aborted')
  t.ok(waiting.every(({ ms }) => ms < (TOKEN_TIMEOUT_S + 1) * 1000), 'no request waited much longer than PROXY_TOKEN_TIMEOUT_SECONDS')
  t.equal(provider.tokenRequests.length, 1, 'one token request for all of them')
  t.match(proxy.logs.find('token refresh failed'), [{ reason: 'timeout' }], 'logged as a timeout')

  const sent = performance.now()
  t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 503)
  t.ok(performance.now() - sent < 250, 'while backing off, refused at once')

  hang.off()
  await waitReady(proxy, 3_000)
  t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200, 'recovers by itself once the endpoint answers')
  t.equal(hang.maxConcurrent, 1, 'never more than one token request in flight')
})
