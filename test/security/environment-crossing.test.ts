import t from 'tap'
import { loadConfig } from '../../src/load-config.js'
import { buildRouteTable, reachesForeignBase } from '../../src/routing/route-table.js'
import { assertRefused, assertStillServes, get, send, startRig } from './rig.js'
import { folded } from '../helpers/canonical.js'

t.test('the foreign paths of each route come from the configured base URLs, not from a name', async (t) => {
  const routes = (env: Record<string, string>) => new Map(buildRouteTable(loadConfig({
    PAYMENTS_PRODUCTION_API_KEY: 'HC_p', PAYMENTS_PRODUCTION_PUBLIC_KEY: 'pk_p',
    PAYMENTS_SANDBOX_API_KEY: 'HC_s', PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_s',
    PROXY_DEFAULT_ENVIRONMENT: 'production',
    ...env,
  }).config).map((r) => [r.prefix, r.foreignPaths]))
  const derived = routes({ PAYMENTS_FIAT_BASE_URL: 'https://f.example.com/api/b2b', PAYMENTS_CRYPTO_BASE_URL: 'https://c.example.com/api' })
  t.same(derived.get('/production/crypto'), ['/sandbox'], 'the crypto sandbox base lies under the production one')
  t.same(derived.get('/crypto'), ['/sandbox'], 'a short route is judged as its environment')
  t.same(derived.get('/production/fiat'), [], 'the fiat bases do not nest')
  t.same(derived.get('/sandbox/crypto'), [], 'nothing lies under the sandbox base')
  const apart = routes({
    PAYMENTS_FIAT_BASE_URL: 'https://f.example.com/api/b2b',
    PAYMENTS_CRYPTO_BASE_URL: 'https://c.example.com/api',
    PAYMENTS_CRYPTO_SANDBOX_BASE_URL: 'https://c-sandbox.example.com/api/test',
  })
  t.same(apart.get('/production/crypto'), [], 'another origin is never under this base')
  const custom = routes({
    PAYMENTS_FIAT_BASE_URL: 'https://f.example.com/v2',
    PAYMENTS_FIAT_SANDBOX_BASE_URL: 'https://f.example.com/v2/Test-Env',
  })
  t.same(custom.get('/production/fiat'), ['/test-env'], 'any nesting, whatever its name')
})

t.test('reachesForeignBase: the base itself, below it, any letter case; not a look-alike segment', async (t) => {
  const cases: Array<[string, boolean]> = [
    ['/sandbox', true], ['/sandbox/', true], ['/sandbox/v1/payouts', true], ['/SANDBOX/v1', true], ['/Sandbox', true],
    ['/sandboxes/v1', false], ['/v1/sandbox', false], ['', false], ['/', false], ['/sandbo', false], ['/sandbox-x', false],
  ]
  for (const [path, expected] of cases) t.equal(reachesForeignBase(folded(path), ['/sandbox']), expected, JSON.stringify(path))
})

t.test('a production route never reaches the sandbox base below it, in any spelling: 404, no upstream, no token refresh', async (t) => {
  const rig = await startRig(t)
  for (const target of ['/production/crypto/sandbox/v1/x', '/production/crypto/%73andbox/v1/x', '/production/crypto/SANDBOX/v1', '/production/crypto/sandbox', '/production/crypto/sandbox/']) {
    await assertRefused(t, rig, get(target), 404, 'ROUTE_NOT_FOUND', target)
    t.equal(rig.provider.tokenRequests.length, rig.startupTokenRequests, `${target}: no token request`)
  }
  const res = await send(rig, get('/production/crypto/sandboxes/v1'))
  t.equal(res.status, 200, 'a look-alike segment is an ordinary production path')
  t.same(rig.provider.upstreamRequests.map((r) => r.url), ['/api/sandboxes/v1'], 'forwarded under the production base')
  await assertStillServes(t, rig, 'after the refusals')
})
