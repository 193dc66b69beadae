import t from 'tap'
import { assertWarned, get, startRig, assertRefused } from './rig.js'

/**
 * Every way of writing `..` (or a separator that would create one) under a route prefix: the
 * provider, or anything between, could resolve it and leave the base URL (SPEC §3).
 */
const TARGETS = [
  '/production/fiat/../crypto/x',
  '/production/fiat/%2e%2e/crypto/x',
  '/production/fiat/.%2e/crypto/x',
  '/production/fiat/%2E%2E%2fcrypto/x',
  '/production/fiat/..\\crypto/x',
  '/production/fiat/..%5ccrypto/x',
  '/production/fiat/..%5Ccrypto/x',
  '/production/fiat/v1/..',
  '/sandbox/fiat/%2e%2e/%2e%2e/b2b/v1',
  '/fiat/%2e%2e/x',
  // double encoding: a server that decodes twice would see `..` or `/`
  '/production/fiat/%252e%252e/crypto/x',
  '/production/fiat/%252e%252e%252fcrypto/x',
  '/production/fiat/v1%252fx',
  // an encoded slash inside a segment
  '/production/fiat/v1%2fx',
  '/production/fiat/v1%2Fx',
]

t.test('dot segments, encoded separators and double encoding get 400 and never reach the provider', async (t) => {
  const rig = await startRig(t)
  for (const target of TARGETS) {
    await assertRefused(t, rig, get(target), 400, 'INVALID_PATH', target)
  }
  assertWarned(t, rig, 'request path refused', 'refused paths')
})
