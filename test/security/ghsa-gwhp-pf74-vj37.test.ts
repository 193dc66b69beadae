import t from 'tap'
import { assertStillServes, get, send, startRig } from './rig.js'

/**
 * GHSA-gwhp-pf74-vj37 (@fastify/reply-from < 12.6.2): a client listing `authorization` in its
 * `Connection` header made the proxy strip the header it had just injected, so the request went
 * upstream without credentials. Fixed in reply-from 12.6.2; this guards an upgrade or a refactor of
 * the header policy from bringing it back.
 */
t.test('GHSA-gwhp-pf74-vj37: Connection: close, authorization does not strip the injected token', async (t) => {
  const rig = await startRig(t)
  const cases = [
    ['Connection: close, authorization'],
    ['Connection: authorization'],
    ['Connection: keep-alive, Authorization, x-request-id', 'Authorization: Bearer client-token'],
  ]
  for (const headers of cases) {
    const label = headers.join(' | ')
    rig.provider.upstreamRequests.length = 0
    const res = await send(rig, get('/sandbox/fiat/v1/ping', headers))
    t.equal(res.status, 200, `${label}: status`)
    const [forwarded] = rig.provider.upstreamRequests
    t.equal(forwarded?.tokenValid, true, `${label}: the injected token arrived`)
    t.type(forwarded?.headers['x-request-id'], 'string', `${label}: the proxy's request id arrived`)
    await assertStillServes(t, rig, label)
  }
})
