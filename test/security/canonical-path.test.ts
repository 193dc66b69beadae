import t from 'tap'
import { canonicalizeTarget, isTokenEndpointPath } from '../../src/routing/canonical-path.js'

t.test('canonicalizeTarget keeps clean targets and decodes only unreserved characters', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['/production/fiat/v1/payouts', '/production/fiat/v1/payouts', ''],
    ['/', '/', ''],
    ['/production/fiat/v1/', '/production/fiat/v1/', ''],
    ['/production/fiat/v1/report.json', '/production/fiat/v1/report.json', ''],
    ['/production/fiat/a...b', '/production/fiat/a...b', ''],
    ['/%70roduction/fiat/v1', '/production/fiat/v1', ''],
    ['/production/fi%61t/%7Ev1', '/production/fiat/~v1', ''],
    ['/production/fiat/a%2eb', '/production/fiat/a.b', ''],
    ['/production/fiat/a%20b', '/production/fiat/a%20b', ''],
    ['/production/fiat/caf%c3%a9', '/production/fiat/caf%C3%A9', ''],
    ['/production/fiat/a%3bb', '/production/fiat/a%3Bb', ''],
    ['/production/fiat/v1;x=1:y@z', '/production/fiat/v1;x=1:y@z', ''],
    ['/production/fiat/v1?a=1&b=%20x', '/production/fiat/v1', 'a=1&b=%20x'],
    ['/production/fiat/v1?next=/a/../b?c', '/production/fiat/v1', 'next=/a/../b?c'],
    ['/production/fiat/v1?note=%0d%0a', '/production/fiat/v1', 'note=%0d%0a'],
    ['/production/fiat/v1?filter[a]=1&ids[]=2&q={a:1}&s=a|b&t=<c>', '/production/fiat/v1', 'filter[a]=1&ids[]=2&q={a:1}&s=a|b&t=<c>'],
  ]
  for (const [target, path, query] of cases) {
    t.same(canonicalizeTarget(target), { ok: true, path, query }, target)
  }
})

t.test('canonicalizeTarget refuses anything whose meaning could change downstream', async (t) => {
  const cases: Array<[string, RegExp]> = [
    // dot segments in every encoding (RFC 3986 §5.2.4 would remove them, so would the provider)
    ['/production/fiat/../crypto/x', /dot segment/],
    ['/production/fiat/./auth/generate-bearer-token', /dot segment/],
    ['/production/fiat/x/..', /dot segment/],
    ['/production/fiat/%2e%2e/crypto/x', /dot segment/],
    ['/production/fiat/.%2e/crypto/x', /dot segment/],
    ['/production/fiat/%2E/x', /dot segment/],
    ['/production/fiat/%ef%bc%8e%ef%bc%8e/x', /dot segment/],
    ['/production/fiat/%e2%80%a5/x', /dot segment/],
    // encoded separators and double encoding
    ['/production/fiat/%2E%2E%2fcrypto/x', /encoded slash/],
    ['/production/fiat/a%2fb', /encoded slash/],
    ['/production/fiat/a%2Fb', /encoded slash/],
    ['/production/fiat/..%5ccrypto/x', /encoded slash or backslash/],
    ['/production/fiat/%252e%252e/x', /double encoding/],
    ['/production/fiat/%25', /double encoding/],
    // raw characters that are not pchar (RFC 3986 §3.3)
    ['/production/fiat/..\\crypto/x', /not allowed/],
    ['/\\127.0.0.1:1/x', /not allowed/],
    ['/production/fiat/a#frag', /not allowed/],
    ['/production/fiat/a"b', /not allowed/],
    ['/production/fiat/a\u00e9', /not allowed/],
    ['/production/fiat/\u00ef\u00bc\u008e', /not allowed/],
    // control characters, malformed encodings, invalid UTF-8, look-alikes
    ['/production/fiat/a%00b', /control character/],
    ['/production/fiat/a%0d%0ab', /control character/],
    ['/production/fiat/a%7f', /control character/],
    ['/production/fiat/a%', /malformed/],
    ['/production/fiat/a%2', /malformed/],
    ['/production/fiat/a%zz', /malformed/],
    ['/production/fiat/%u002e%u002e/x', /malformed/],
    ['/production/fiat/%c0%ae%c0%ae/x', /invalid UTF-8/],
    ['/production/fiat/%ff', /invalid UTF-8/],
    ['/production/fiat/a%ef%bc%8eb', /look-alike/],
    ['/production/fiat/a%ef%bc%8fb', /look-alike/],
    ['/production/fiat/a%ef%bc%bcb', /look-alike/],
    // empty segments and targets that are not origin-form
    ['//127.0.0.1:1/x', /double slash/],
    ['/production//fiat/x', /double slash/],
    ['/production/fiat/auth//generate-bearer-token', /double slash/],
    ['http://127.0.0.1:1/production/fiat/x', /must be a path/],
    ['*', /must be a path/],
    ['127.0.0.1:443', /must be a path/],
    ['', /must be a path/],
    // the query is forwarded byte for byte: only what could end or split the request line is refused
    ['/production/fiat/x?a#b', /query string/],
    ['/production/fiat/x?a=\u00e9', /query string/],
    ['/production/fiat/x?a=b c', /query string/],
  ]
  for (const [target, reason] of cases) {
    const result = canonicalizeTarget(target)
    t.equal(result.ok, false, `${JSON.stringify(target)} refused`)
    if (!result.ok) t.match(result.reason, reason, `${JSON.stringify(target)} reason`)
  }
})

t.test('isTokenEndpointPath recognises the token endpoint in any spelling a provider might accept', async (t) => {
  const blocked = [
    '/production/fiat/auth/generate-bearer-token',
    '/production/fiat/AUTH/GENERATE-BEARER-TOKEN',
    '/production/fiat/Auth/Generate-Bearer-Token/',
    '/production/fiat/auth/generate-bearer-token;x',
    '/production/fiat/auth;x/generate-bearer-token',
    '/production/fiat/auth/generate-bearer-token.json',
    '/production/fiat/auth/generate-bearer-token%20',
    '/production/fiat/auth/generate-bearer-token%3Bx',
    '/production/fiat/auth/generate-bearer-to%E2%84%AAen',
    '/production/fiat/auth/%EF%BD%87enerate-bearer-token',
    '/production/fiat/auth/generate-bearer-token/extra',
    '/production/crypto/auth/generate-bearer-token',
    '/fiat/auth/generate-bearer-token',
    '/fiat/v1/auth/generate-bearer-token',
    '/fiat/auth/generate-bearer-token%zz',
  ]
  for (const path of blocked) t.equal(isTokenEndpointPath(path), true, path)
  const allowed = [
    '/production/fiat/auth',
    '/production/fiat/auth/refresh',
    '/production/fiat/v1/generate-bearer',
    '/production/fiat/v1/bearer-token',
    '/production/fiat/v1/payouts/generate',
    '/',
  ]
  for (const path of allowed) t.equal(isTokenEndpointPath(path), false, path)
})
