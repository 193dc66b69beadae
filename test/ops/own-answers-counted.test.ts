/**
 * Issue 35 item 7: requests_total counts every answer the proxy gives, its own refusals and 5xx
 * included, once each and with their code, so the 5xx-ratio alert and the status panel see them.
 */
import t from 'tap'
import { request } from 'undici'
import { providerEnv, startProvider, startProxy, waitReady, type RunningProxy } from '../helpers/harness.js'
import { rawRequest } from '../helpers/raw-http.js'
import { startRedis } from '../helpers/redis-server.js'
import { assertProxyError } from '../helpers/proxy-error.js'

async function requestsTotal (proxy: RunningProxy): Promise<Map<string, number>> {
  const text = await (await request(`${proxy.url}/metrics`)).body.text()
  const counts = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (!line.startsWith('payments_auth_proxy_requests_total{')) continue
    const labels = line.slice(line.indexOf('{') + 1, line.lastIndexOf('}'))
    counts.set(labels, Number(line.slice(line.lastIndexOf(' ') + 1)))
  }
  return counts
}

function countOf (counts: Map<string, number>, ...labels: string[]): number {
  let n = 0
  for (const [key, value] of counts) if (labels.every((l) => key.includes(l))) n += value
  return n
}

t.test('own 503 STATE_UNAVAILABLE, 404 ROUTE_NOT_FOUND and a malformed request are each counted once with their code', async (t) => {
  const provider = await startProvider(t)
  const redis = await startRedis(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_REDIS_URL: redis.url }))
  await waitReady(proxy)
  t.equal((await request(`${proxy.url}/sandbox/fiat/v1/balances`)).statusCode, 200)

  await redis.stop()
  for (let i = 0; i < 3; i++) {
    const res = await request(`${proxy.url}/sandbox/fiat/v1/payouts`, { method: 'POST', body: `{"externalReference":"r-${i}"}`, headers: { 'content-type': 'application/json' } })
    await assertProxyError(t, res, 503, 'STATE_UNAVAILABLE', 'the store is down')
  }
  await assertProxyError(t, await request(`${proxy.url}/elsewhere`), 404, 'ROUTE_NOT_FOUND')
  const malformed = await rawRequest(proxy.port, 'GET /sandbox/fiat/v1/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n')
  t.equal(malformed.status, 400)
  await request(`${proxy.url}/healthz`)

  const counts = await requestsTotal(proxy)
  t.equal(countOf(counts, 'environment="sandbox"', 'status_class="2xx"', 'code=""'), 1, 'the forwarded answer, with an empty code')
  t.equal(countOf(counts, 'environment="sandbox"', 'interface="fiat"', 'status_class="5xx"', 'code="STATE_UNAVAILABLE"'), 3, 'three own 503s')
  t.equal(countOf(counts, 'status_class="4xx"', 'code="ROUTE_NOT_FOUND"'), 1, 'the 404 of no route')
  t.equal(countOf(counts, 'status_class="4xx"', 'code="BAD_REQUEST"'), 1, 'the malformed request answered outside Fastify')
  t.equal(countOf(counts), 6, 'nothing else, and the own endpoints not at all')
})

t.test('own 503 TOKEN_UNAVAILABLE is counted with its code', async (t) => {
  const provider = await startProvider(t)
  provider.setTokenHandler((_req, res) => { res.writeHead(500).end(); return true })
  const proxy = await startProxy(t, providerEnv(provider))
  const res = await request(`${proxy.url}/production/fiat/v1/balances`)
  await assertProxyError(t, res, 503, 'TOKEN_UNAVAILABLE', 'no token can be had')
  const counts = await requestsTotal(proxy)
  t.equal(countOf(counts, 'environment="production"', 'interface="fiat"', 'status_class="5xx"', 'code="TOKEN_UNAVAILABLE"'), 1)
  t.equal(countOf(counts), 1)
})
