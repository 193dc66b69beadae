import t from 'tap'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'
import { SANDBOX_ONLY, send } from '../tokens/token-kit.js'
import { eventually } from '../helpers/eventually.js'

t.test('a token refresh does not queue behind slow upstream calls holding every pooled connection', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, {
    ...SANDBOX_ONLY, PROXY_UPSTREAM_CONNECTIONS: '2', PROXY_TOKEN_TIMEOUT_SECONDS: '1',
  }))
  await waitReady(proxy)
  // Both pooled connections to the fiat host, where the token endpoint also lives, hang.
  let held = 0
  provider.setUpstreamHandler(async (req) => {
    if (!(req.url ?? '').endsWith('/slow')) return false
    held++
    await new Promise(() => {}) // never answers; the provider's close() destroys the socket
    return true
  })
  const slow = [send(proxy, '/sandbox/fiat/v1/slow'), send(proxy, '/sandbox/fiat/v1/slow')]
  await eventually(() => held >= 2, { what: 'both pooled connections held', everyMs: 5 })

  provider.revokeAllTokens()
  const started = performance.now()
  const res = await send(proxy, '/sandbox/crypto/v1/a')
  const tookMs = performance.now() - started
  t.equal(res.status, 200, 'the 401 was answered by a refresh and a retry')
  t.ok(tookMs < 1_000, `within ${tookMs.toFixed(0)} ms, not after the slow calls time out`)
  t.equal(provider.tokenRequests.length, 2, 'the refresh reached the token endpoint')
  await provider.close() // cuts the hanging calls, so the proxy can close without waiting for them
  t.same((await Promise.all(slow)).map((r) => r.status), [502, 502], 'the cut calls fail on their own')
})
