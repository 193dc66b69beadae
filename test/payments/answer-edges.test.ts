/**
 * Where a followed request's answer is decided at an edge (SPEC §12, "Payment-Id when a record
 * exists"): a refusal before anything is sent names no payment and leaves none; a provider's 5xx is
 * answered only once the payment is `unknown`, so a caller asking right after finds it so; a client
 * that goes away before the provider answers aborts the forward, and its payment is `unknown` (the
 * provider may have acted), never forgotten.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { runCli, listeningPort } from '../helpers/child-proxy.js'
import { eventually, HANG_MS } from '../helpers/eventually.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { payout, paymentOf, setting, startSidecar, waitForState } from './payments-harness.js'

t.test('refused before anything is sent (no token): 503 without Payment-Id, and no payment', async (t) => {
  const { provider, env } = await setting(t)
  provider.setTokenHandler((_req, res) => { res.writeHead(500).end(); return true })
  const child = runCli(t, [], env)
  await eventually(() => /Server listening at http:\/\/127\.0\.0\.1:\d+/.test(child.stdout()), { what: 'the proxy listening', timeoutMs: HANG_MS, detail: () => child.stdout() + child.stderr() })
  const url = `http://127.0.0.1:${listeningPort(child)}`
  await eventually(() => /"msg":"token refresh failed"/.test(child.stdout() + child.stderr()), { what: 'a failed token request', timeoutMs: HANG_MS, detail: () => child.stdout() })
  const res = await payout(url, { amount: 5, currency: 'KES', externalReference: 'edge-no-token' })
  await assertProxyError(t, res, 503, 'TOKEN_UNAVAILABLE')
  t.equal(res.headers.get('payment-id'), null, 'the refusal names no payment')
  t.equal(await paymentOf(url, 'edge-no-token'), null, 'and none was kept')
  t.equal(provider.upstreamRequests.length, 0, 'nothing reached the provider')
})

t.test('a provider 5xx is answered once the payment is unknown; a client gone early leaves it unknown', async (t) => {
  const { provider, env } = await setting(t)
  const sidecar = await startSidecar(t, env)
  let mode: 'fail' | 'slow' = 'fail'
  provider.setUpstreamHandler(async (req, res) => {
    if (req.method !== 'POST') return false
    if (mode === 'fail') {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"success":false,"message":"try later"}')
      return true
    }
    await sleep(800)
    return false
  })
  const failed = await payout(sidecar.url, { amount: 5, currency: 'KES', externalReference: 'edge-5xx' })
  t.equal(failed.status, 503)
  const id = failed.headers.get('payment-id')
  t.match(id, /^pay_/, 'the payment is named: the provider may have acted')
  t.match(await paymentOf(sidecar.url, 'edge-5xx'), { id, state: 'unknown' }, 'unknown as soon as the 5xx is answered')

  mode = 'slow'
  const abort = new AbortController()
  const gone = payout(sidecar.url, { amount: 6, currency: 'KES', externalReference: 'edge-gone' }, undefined, abort.signal)
  await eventually(() => provider.upstreamRequests.filter((r) => r.method === 'POST').length === 2, { what: 'the slow payout at the provider' })
  abort.abort()
  await t.rejects(gone, 'the client went away')
  const left = await waitForState(sidecar.url, 'edge-gone', 'unknown', 5_000, () => sidecar.child.stdout())
  t.equal(left.transactionId, null, 'no answer came: the provider may have acted, so it is followed as unknown')
})
