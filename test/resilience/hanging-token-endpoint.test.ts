import t from 'tap'
import { startProvider, startProxy, providerEnv, waitReady } from '../helpers/harness.js'
import { SANDBOX_ONLY, send } from '../tokens/token-kit.js'
import { hangingTokenEndpoint } from './token-faults.js'
import { TOKEN_WAIT_MS } from '../../src/tokens/token-source.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { eventually } from '../helpers/eventually.js'

// Real time: the point is that a socket which never answers is cut off by the token timeout, and
// that requests do not wait for it.
const TOKEN_TIMEOUT_S = 3

t.test('a token endpoint that accepts and never answers: fast 503s, and the token request is cut off after PROXY_TOKEN_TIMEOUT_SECONDS', async (t) => {
  const provider = await startProvider(t)
  const hang = hangingTokenEndpoint(provider)
  hang.on()
  const proxy = await startProxy(t, providerEnv(provider, { ...SANDBOX_ONLY, PROXY_TOKEN_TIMEOUT_SECONDS: String(TOKEN_TIMEOUT_S) }), { random: () => 0 })
  t.same(proxy.logs.find('token refresh failed'), [], 'listening while the start-up token request still hangs')
  t.equal((await send(proxy, '/healthz')).status, 200, '/healthz 200 meanwhile')
  t.equal((await send(proxy, '/readyz')).status, 503, '/readyz 503 meanwhile')

  // The first token request might still answer: requests give it TOKEN_WAIT_MS, not its whole timeout.
  const waiting = await Promise.all(Array.from({ length: 10 }, async () => {
    const sent = performance.now()
    const res = await send(proxy, '/sandbox/fiat/v1/a')
    return { res, ms: performance.now() - sent }
  }))
  for (const { res } of waiting) await assertProxyError(t, res, 503, 'TOKEN_UNAVAILABLE', 'a request waiting for the first token')
  t.ok(waiting.every(({ res }) => res.headers.get('retry-after') !== null), 'each with Retry-After')
  const longestS = Math.max(...waiting.map((w) => w.ms)) / 1000
  t.comment(`answered within ${longestS.toFixed(2)} s; the token request times out after ${TOKEN_TIMEOUT_S} s`)
  t.ok(waiting.every(({ ms }) => ms >= TOKEN_WAIT_MS * 0.9 && ms < TOKEN_WAIT_MS + 500), `each waited about TOKEN_WAIT_MS (${TOKEN_WAIT_MS} ms), not the token timeout`)
  t.equal(provider.tokenRequests.length, 1, 'one token request for all of them')

  await eventually(() => proxy.logs.find('token refresh failed').length === 1, { what: 'the token request to time out', timeoutMs: (TOKEN_TIMEOUT_S + 2) * 1000 })
  t.match(proxy.logs.find('token refresh failed'), [{ reason: 'timeout' }], 'the token request was aborted, logged as a timeout')
  let sent = performance.now()
  await assertProxyError(t, await send(proxy, '/sandbox/fiat/v1/a'), 503, 'TOKEN_UNAVAILABLE', 'while backing off')
  t.ok(performance.now() - sent < 250, 'while backing off, refused at once')

  await eventually(() => provider.tokenRequests.length === 2, { what: 'the second token request' })
  sent = performance.now()
  await assertProxyError(t, await send(proxy, '/sandbox/fiat/v1/a'), 503, 'TOKEN_UNAVAILABLE', 'while the retry hangs')
  t.ok(performance.now() - sent < 250, 'while the retry hangs in its turn, refused at once too')

  hang.off()
  await waitReady(proxy, 10_000)
  t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200, 'recovers by itself once the endpoint answers')
  t.equal(hang.maxConcurrent, 1, 'never more than one token request in flight')
})

