import t from 'tap'
import { assertNothingForwarded, assertStillServes, get, send, startRig, assertRefused } from './rig.js'
import { assertProxyError } from '../helpers/proxy-error.js'

/**
 * Encoded NUL/CR/LF, fragments, broken percent-encoding and look-alike dots: nothing of it may reach
 * a header or path upstream. What could traverse is INVALID_PATH; the rest is not canonical (SPEC §3).
 */
const TARGETS: Array<[string, string]> = [
  ['/production/fiat/v1%00', 'PATH_NOT_CANONICAL'],
  ['/production/fiat/v1%0d%0aX-Injected:%201', 'PATH_NOT_CANONICAL'],
  ['/production/fiat/v1%0a', 'PATH_NOT_CANONICAL'],
  ['/production/fiat/v1#frag', 'PATH_NOT_CANONICAL'],
  ['/production/fiat/v1%', 'PATH_NOT_CANONICAL'],
  ['/production/fiat/v1%zz', 'PATH_NOT_CANONICAL'],
  ['/production/fiat/v1%2', 'PATH_NOT_CANONICAL'],
  ['/production/fiat/v1%ef%bc%8ejson', 'PATH_NOT_CANONICAL'],
  ['/production/fiat/%ef%bc%8e%ef%bc%8e/crypto/x', 'INVALID_PATH'],
  ['/production/fiat/%c0%ae%c0%ae/x', 'INVALID_PATH'],
  ['/production/fiat/v1?a#b', 'INVALID_PATH'],
]

t.test('control characters, fragments, malformed encodings and look-alike dots get 400', async (t) => {
  const rig = await startRig(t)
  for (const [target, code] of TARGETS) {
    await assertRefused(t, rig, get(target), 400, code, target)
  }
})

t.test('raw bytes outside ASCII in the path get 400 (a full-width dot sent unencoded)', async (t) => {
  const rig = await startRig(t)
  const bytes = Buffer.concat([Buffer.from('GET /production/fiat/'), Buffer.from('．．', 'utf8'), Buffer.from('/crypto/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')])
  const res = await send(rig, bytes)
  await assertProxyError(t, res, 400, 'BAD_REQUEST', 'raw full-width dots')
  assertNothingForwarded(t, rig, 'raw full-width dots')
  await assertStillServes(t, rig, 'raw full-width dots')
})

t.test('an encoded CR/LF in the query is forwarded still encoded, never as a header break', async (t) => {
  const rig = await startRig(t)
  const res = await send(rig, get('/sandbox/fiat/v1/ping?note=%0d%0aX-Injected:%201'))
  t.equal(res.status, 200)
  const [forwarded] = rig.provider.upstreamRequests
  t.equal(forwarded?.url, '/api/sandbox/b2b/v1/ping?note=%0d%0aX-Injected:%201', 'query passed byte for byte')
  t.equal(forwarded?.headers['x-injected'], undefined, 'no injected header')
  await assertStillServes(t, rig, 'encoded CR/LF in the query')
})
