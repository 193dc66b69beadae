import t from 'tap'
import { providerEnv, startProvider, startProxy } from '../helpers/harness.js'
import { metricSum } from './token-kit.js'
import { deferred } from '../helpers/deferred.js'
import { eventually } from '../helpers/eventually.js'

t.test('50 concurrent requests at a cold start cause exactly one token request per environment', async (t) => {
  const provider = await startProvider(t)
  // Hold every token answer until the test has all 50 requests waiting on the proxy.
  const { promise: gate, resolve: release } = deferred()
  provider.setTokenHandler(async () => { await gate; return false })
  const proxy = await startProxy(t, providerEnv(provider))

  const paths = ['/production/fiat/v1/a', '/sandbox/fiat/v1/a', '/production/crypto/v1/a', '/sandbox/crypto/v1/a', '/fiat/v1/a']
  const requests = Array.from({ length: 50 }, (_, i) => {
    const path = paths[i % paths.length] ?? '/fiat/v1/a'
    return fetch(proxy.url + path).then(async (res) => ({ path, status: res.status, body: await res.json() as Record<string, unknown> }))
  })
  await eventually(async () => await connections(proxy.app.server) >= 50, { what: '50 connections', everyMs: 5 })
  // Long enough for the last requests to reach the token wait, well inside its TOKEN_WAIT_MS.
  await new Promise((resolve) => setTimeout(resolve, 50))
  release()
  const answers = await Promise.all(requests)

  t.same(answers.filter((a) => a.status !== 200), [], 'every request succeeded')
  t.equal(await metricSum(proxy, 'token_wait_seconds_count'), 50, 'all 50 waited for the start-up token request')
  const perEnvironment = { production: 0, sandbox: 0 }
  for (const r of provider.tokenRequests) if (r.environment !== null) perEnvironment[r.environment]++
  t.same(perEnvironment, { production: 1, sandbox: 1 }, 'one token request per environment')
  t.ok(provider.upstreamRequests.every((r) => r.tokenValid), 'every upstream request carried a valid token')
  t.equal(provider.upstreamRequests.length, 50)
})

function connections (server: { getConnections (cb: (err: Error | null, count: number) => void): void }): Promise<number> {
  return new Promise((resolve, reject) => { server.getConnections((err, count) => { if (err === null) resolve(count); else reject(err) }) })
}

