import t from 'tap'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'

t.test('each route reaches its base path with its environment token', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider))
  await waitReady(proxy)
  const cases = [
    ['/production/fiat/v1/a', 'production', 'fiat'],
    ['/sandbox/fiat/v1/a', 'sandbox', 'fiat'],
    ['/production/crypto/v1/a', 'production', 'crypto'],
    ['/sandbox/crypto/v1/a', 'sandbox', 'crypto'],
    ['/fiat/v1/a', 'sandbox', 'fiat'],
    ['/crypto/v1/a', 'sandbox', 'crypto'],
  ] as const
  for (const [path, environment, iface] of cases) {
    const res = await fetch(proxy.url + path)
    t.equal(res.status, 200, path)
    const echo = await res.json() as Record<string, unknown>
    t.equal(echo['environment'], environment, `${path} environment`)
    t.equal(echo['interface'], iface, `${path} interface`)
    t.equal(echo['path'], '/v1/a', `${path} path under the base`)
  }
  t.equal(provider.tokenRequests.length, 2, 'one token per environment')
})
