import t from 'tap'
import { assertNothingForwarded, assertStillServes, assertWarned, get, send, startRig } from './rig.js'
import { request } from './raw-client.js'
import { assertProxyError } from '../helpers/proxy-error.js'

/** The token endpoint hands a Bearer token to whoever holds the API key; the proxy holds it for every client. */
const BLOCKED = [
  '/production/fiat/auth/generate-bearer-token',
  '/production/fiat/%61uth/generate-bearer-token',
  '/production/fiat/auth/%67enerate-bearer-token',
  '/production/fiat/AUTH/GENERATE-BEARER-TOKEN',
  '/production/fiat/Auth/Generate-Bearer-Token',
  '/production/fiat/auth/generate-bearer-token/',
  '/production/fiat/auth/generate-bearer-token?publicKey=x',
  '/sandbox/fiat/auth/generate-bearer-token',
  '/fiat/auth/generate-bearer-token',
  '/production/crypto/b2b/auth/generate-bearer-token',
]

/** Spellings a lenient server reads as the token path: not canonical, so refused before the block is even asked (SPEC §3). */
const NOT_CANONICAL = [
  '/production/fiat/auth/generate-bearer-token;x',
  '/production/fiat/auth;x/generate-bearer-token',
  '/production/fiat/auth/generate-bearer-token%3bx',
  '/production/fiat/auth/generate-bearer-token.json',
  '/production/fiat/auth/generate-bearer-token%20',
  '/production/fiat/auth/generate-bearer-to%E2%84%AAen',
  '/production/fiat/auth/generate-bearer-token.',
]

/** Spellings that a normalising server would turn into the token path: refused as paths first. */
const REFUSED_AS_PATHS = [
  '/production/fiat/./auth/generate-bearer-token',
  '/production/fiat/auth/./generate-bearer-token',
  '/production/fiat/x/../auth/generate-bearer-token',
  '/production/fiat/auth//generate-bearer-token',
  '/production/fiat//auth/generate-bearer-token',
  '/production/fiat/auth%2fgenerate-bearer-token',
  '/production/fiat/auth%252fgenerate-bearer-token',
]

t.test('the token endpoint in any spelling gets 403 TOKEN_ENDPOINT_BLOCKED and is never reached', async (t) => {
  const rig = await startRig(t)
  for (const target of BLOCKED) {
    for (const method of ['GET', 'POST']) {
      const label = `${method} ${target}`
      const res = await send(rig, request(method, target, ['Content-Type: application/json', 'Content-Length: 2'], '{}'))
      await assertProxyError(t, res, 403, 'TOKEN_ENDPOINT_BLOCKED', label)
      assertNothingForwarded(t, rig, label)
    }
    await assertStillServes(t, rig, target)
  }
  assertWarned(t, rig, 'token endpoint request refused', 'blocked token paths')
})

t.test('spellings a lenient server reads as the token endpoint get 400 PATH_NOT_CANONICAL and are never reached', async (t) => {
  const rig = await startRig(t)
  for (const target of NOT_CANONICAL) {
    const res = await send(rig, get(target))
    await assertProxyError(t, res, 400, 'PATH_NOT_CANONICAL', target)
    assertNothingForwarded(t, rig, target)
    await assertStillServes(t, rig, target)
  }
  assertWarned(t, rig, 'path not canonical: refused', 'non-canonical token paths')
})

t.test('spellings that normalise onto the token endpoint get 400 INVALID_PATH and are never reached', async (t) => {
  const rig = await startRig(t)
  for (const target of REFUSED_AS_PATHS) {
    const res = await send(rig, get(target))
    await assertProxyError(t, res, 400, 'INVALID_PATH', target)
    assertNothingForwarded(t, rig, target)
    await assertStillServes(t, rig, target)
  }
})
