import t from 'tap'
import { assertStillServes, get, send, startRig, assertRefused } from './rig.js'

t.test('look-alike route prefixes get 404 ROUTE_NOT_FOUND and are never forwarded', async (t) => {
  const rig = await startRig(t)
  for (const target of ['/production/fiatX/v1', '/Production/Fiat/v1', '/PRODUCTION/fiat/v1', '/production/fiat;x/v1', '/production-fiat/v1', '/fiatx/v1', '/production']) {
    await assertRefused(t, rig, get(target), 404, 'ROUTE_NOT_FOUND', target)
  }
})

t.test('an encoded prefix is no prefix: 404, never the route its decoded text names (SPEC §3)', async (t) => {
  const rig = await startRig(t)
  for (const target of ['/%70roduction/fiat/v1', '/production/fi%61t/v1', '/%73andbox/crypto/v1']) {
    await assertRefused(t, rig, get(target), 404, 'ROUTE_NOT_FOUND', target)
  }
})

t.test('below the prefix, encoded letters and digits are decoded and forwarded as the one path every check judged', async (t) => {
  const rig = await startRig(t)
  const cases: Array<[string, string, string]> = [
    ['/production/fiat/v%31', 'production', '/api/b2b/v1'],
    ['/sandbox/crypto/%76%31/%5Fx%2D', 'sandbox', '/api/sandbox/v1/_x-'],
  ]
  for (const [target, environment, upstreamUrl] of cases) {
    const res = await send(rig, get(target))
    t.equal(res.status, 200, `${target}: status`)
    t.equal((JSON.parse(res.body) as { environment: string }).environment, environment, `${target}: environment`)
    t.same(rig.provider.upstreamRequests.map((r) => r.url), [upstreamUrl], `${target}: forwarded canonical path`)
    t.equal(rig.provider.tokenRequests.length, rig.startupTokenRequests, `${target}: no token request`)
    await assertStillServes(t, rig, target)
  }
})
