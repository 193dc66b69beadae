import t from 'tap'
import { assertProxyError } from '../helpers/proxy-error.js'
import { request } from './raw-client.js'
import { assertNothingForwarded, assertRefused, assertStillServes, get, send, startRig } from './rig.js'

t.test('a 20 KiB header gets 431 and nothing is forwarded', async (t) => {
  const rig = await startRig(t)
  for (const headers of [[`X-Big: ${'a'.repeat(20 * 1024)}`], [`Cookie: ${'c'.repeat(20 * 1024)}`]]) {
    const label = `${headers[0]?.slice(0, 8) ?? ''}... (20 KiB)`
    const res = await assertRefused(t, rig, get('/production/fiat/v1/payouts', headers), 431, 'HEADERS_TOO_LARGE', label)
    t.equal(res.headers.connection, 'close', `${label}: Connection: close`)
  }
})

const MANY_HEADERS: Array<[string, string[]]> = [
  ['200 headers of ordinary size', Array.from({ length: 200 }, (_, i) => `X-Header-${i}: ${'v'.repeat(100)}`)],
  ['200 tiny headers, under the 16 KiB size limit', Array.from({ length: 200 }, (_, i) => `X-H${i}: ${i}`)],
]

for (const [label, headers] of MANY_HEADERS) {
  t.test(`${label} get 431 and nothing is forwarded`, async (t) => {
    const rig = await startRig(t)
    const res = await send(rig, get('/production/fiat/v1/payouts', headers))
    await assertProxyError(t, res, 431, 'HEADERS_TOO_LARGE', label)
    assertNothingForwarded(t, rig, label)
    await assertStillServes(t, rig, label)
  })
}

t.test('200 headers on a POST whose body is still coming get 431 with Connection: close, and nothing after it is read as a request', async (t) => {
  const rig = await startRig(t)
  const headers = [...Array.from({ length: 200 }, (_, i) => `X-H${i}: ${i}`), 'Content-Type: application/json', 'Content-Length: 100000']
  // Half a body, then a smuggled request inside the rest: it must be discarded, never parsed.
  const smuggled = request('GET', '/production/fiat/v1/smuggled')
  const res = await send(rig, request('POST', '/production/fiat/v1/payouts', headers, `{"pad":"${'x'.repeat(1000)}${smuggled}`))
  await assertProxyError(t, res, 431, 'HEADERS_TOO_LARGE', 'a POST with 200 headers')
  t.equal(res.headers.connection, 'close', 'Connection: close: the rest of the body is not a next request')
  assertNothingForwarded(t, rig, 'a POST with 200 headers')
  await assertStillServes(t, rig, 'a POST with 200 headers')
})
