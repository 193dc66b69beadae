import fc from 'fast-check'
import t from 'tap'
import { foldPath, isTokenEndpointPath, LOGGED_PATH_CHARS, loggablePath, readRestPath, type CanonicalPath } from '../../src/routing/canonical-path.js'
import { readTarget, type TargetReading } from '../../src/routing/request-target.js'
import { folded } from '../helpers/canonical.js'

const PREFIXES = ['/production/fiat', '/production/crypto', '/sandbox/fiat', '/sandbox/crypto', '/fiat', '/crypto']
const strict = { allowDots: false }
const dotted = { allowDots: true }

function rest (target: string): TargetReading {
  return readTarget(target, PREFIXES, strict)
}

t.test('readTarget: the prefix exactly, the rest canonical and decoded, the query as sent', async (t) => {
  const cases: Array<[string, string, string, string]> = [
    ['/production/fiat/v1/payouts', '/production/fiat', '/v1/payouts', ''],
    ['/production/fiat', '/production/fiat', '', ''],
    ['/production/fiat/', '/production/fiat', '/', ''],
    ['/fiat/V1/Payouts/', '/fiat', '/V1/Payouts/', ''],
    ['/fiat/v1/pay%6Fut%73', '/fiat', '/v1/payouts', ''],
    ['/fiat/%2D%5f%41%7a%30', '/fiat', '/-_Az0', ''],
    ['/fiat/%50ayouts/%5A%39', '/fiat', '/Payouts/Z9', ''],
    ['/fiat/v1/pay%6Futs/', '/fiat', '/v1/payouts/', ''],
    ['/crypto/v1?a=1&b=%20x', '/crypto', '/v1', 'a=1&b=%20x'],
    ['/crypto/v1?next=/a/../b?c', '/crypto', '/v1', 'next=/a/../b?c'],
    ['/crypto/v1?filter[a]=1&ids[]=2&q={a:1}&s=a|b&t=<c>', '/crypto', '/v1', 'filter[a]=1&ids[]=2&q={a:1}&s=a|b&t=<c>'],
  ]
  for (const [target, prefix, path, query] of cases) {
    const reading = rest(target)
    t.same(reading.kind === 'route' && reading.rest.ok ? [reading.prefix, reading.rest.path, reading.query] : reading, [prefix, path, query], target)
  }
})

t.test('readTarget: outside the routes only plain paths reach the router; traversal is refused as such', async (t) => {
  const cases: Array<[string, TargetReading]> = [
    ['/healthz', { kind: 'other', path: '/healthz', query: '' }],
    ['/metrics?x=1', { kind: 'other', path: '/metrics', query: 'x=1' }],
    ['/production/fiatX/v1', { kind: 'other', path: '/production/fiatX/v1', query: '' }],
    ['/Production/Fiat/v1', { kind: 'other', path: '/Production/Fiat/v1', query: '' }],
    // An encoded prefix is no prefix (SPEC §3): a 404, never the route the decoded text names.
    ['/%70roduction/fiat/v1', { kind: 'other', path: '/', query: '' }],
    ['/fi%61t/v1', { kind: 'other', path: '/', query: '' }],
    ['/fiat;x/v1', { kind: 'other', path: '/', query: '' }],
    ['//127.0.0.1:1/x', { kind: 'refused', reason: 'empty path segment (double slash)' }],
    ['/\\127.0.0.1:1/x', { kind: 'refused', reason: 'backslash' }],
    ['/production//fiat/x', { kind: 'refused', reason: 'empty path segment (double slash)' }],
    ['http://127.0.0.1:1/production/fiat/x', { kind: 'refused', reason: 'the request target must be a path' }],
    ['*', { kind: 'refused', reason: 'the request target must be a path' }],
    ['', { kind: 'refused', reason: 'the request target must be a path' }],
    ['/fiat/x?a#b', { kind: 'refused', reason: 'the query string contains characters that must be percent-encoded' }],
    ['/fiat/x?a=b c', { kind: 'refused', reason: 'the query string contains characters that must be percent-encoded' }],
  ]
  for (const [target, expected] of cases) t.same(rest(target), expected, JSON.stringify(target))
})

function problemOf (path: string, options = strict): string {
  const reading = readRestPath(path, options)
  return reading.ok ? `ok ${reading.path}` : `${reading.problem.kind} ${reading.problem.segment}`
}

t.test('every spelling of the attack report is PATH_NOT_CANONICAL, at the segment that holds it', async (t) => {
  const payouts = [
    'payouts;x=1', 'payouts;', 'payouts%3b', 'payouts%3B', 'payouts.', 'payouts%2e', 'payouts.json', 'payouts%20',
    'payouts%C2%A0', 'payouts~', 'payouts:', 'payouts@', 'payouts!', 'payouts$', 'payout%C5%BF', "payouts'",
    'payouts(', 'payouts)', 'payouts*', 'payouts+', 'payouts,', 'payouts=', 'payouts%7E', 'payouts%00', 'payouts%0d%0a',
    'payouts%', 'payouts%zz', 'payouts%25', 'pay%C3%B6uts', 'payouts#x', 'payouts"', 'payouts\u00e9',
  ]
  for (const spelling of payouts) t.equal(problemOf(`/v1/${spelling}`), 'not-canonical 2', spelling)
  t.equal(problemOf('/v1;x/payouts'), 'not-canonical 1', '/v1;x/payouts')
  for (const spelling of ['sandbox;x', 'sandbox;', 'sandbox%3B', 'sandbox.', 'sandbox.json', 'sandbox%20', 'sandbox%C2%A0', 'sandbox:']) {
    t.equal(problemOf(`/${spelling}/x`), 'not-canonical 1', spelling)
  }
})

t.test('traversal in any encoding is refused as traversal, before any other problem in the path', async (t) => {
  const cases = [
    '/../crypto/x', '/./auth/generate-bearer-token', '/x/..', '/%2e%2e/crypto/x', '/.%2e/crypto/x', '/%2E/x',
    '/%ef%bc%8e%ef%bc%8e/x', '/%e2%80%a5/x', '/%2E%2E%2fcrypto/x', '/..%5ccrypto/x', '/%252e%252e/x', '/..\\crypto/x',
    '/a\\b', '/a%5cb', '/a%255cb', '/%c0%ae%c0%ae/x', '/%ff', '/auth//generate-bearer-token', '/a%ef%bc%8fb',
    '/%2525252e',
  ]
  for (const path of cases) t.equal(problemOf(path).split(' ')[0], 'traversal', path)
  t.equal(problemOf('/payouts;x/../y'), 'traversal 2', 'a later traversal wins over an earlier non-canonical segment')
})

t.test('PROXY_PATH_ALLOW_DOTS admits inner dots only; percent-encoded dots stay refused', async (t) => {
  const cases: Array<[string, string]> = [
    ['/tokens/USDC.e', 'ok /tokens/USDC.e'],
    ['/v1/a.b.c', 'ok /v1/a.b.c'],
    ['/v1/payouts.json', 'ok /v1/payouts.json'],
    ['/v1/payouts.', 'not-canonical 2'],
    ['/v1/.payouts', 'not-canonical 2'],
    ['/v1/payouts%2ejson', 'not-canonical 2'],
    ['/v1/payouts;x', 'not-canonical 2'],
    ['/../x', 'traversal 1'],
  ]
  for (const [path, expected] of cases) t.equal(problemOf(path, dotted), expected, path)
  t.equal(problemOf('/tokens/USDC.e'), 'not-canonical 2', 'without the setting, a dot is refused')
})

t.test('each refusal says why, in words an operator can act on', async (t) => {
  const reasonOf = (path: string): string => {
    const reading = readRestPath(path, strict)
    return reading.ok ? 'ok' : `${reading.problem.kind}: ${reading.problem.reason}`
  }
  const cases: Array<[string, string]> = [
    ['/a\\b', 'traversal: backslash'],
    ['/a%5cb', 'traversal: encoded slash or backslash'],
    ['/a%2fb', 'traversal: encoded slash or backslash'],
    ['/a%2fb%', 'traversal: encoded slash or backslash'],
    ['/%25252e%25252e/x', 'traversal: dot segment'],
    ['/%2525252e', 'traversal: percent-encoding nested too deep'],
    ['/a%ef%bc%8fb', 'traversal: look-alike slash'],
    ['/%c0%ae%c0%ae/x', 'traversal: percent-encoding that is not UTF-8'],
    ['/x/v1//y', 'traversal: empty path segment (double slash)'],
    ['/v1/pay%6Futs%', "not-canonical: '%' is not allowed in a path segment (allowed: A-Z a-z 0-9 - _)"],
    ['/v1/pay%6Futs%3b', 'not-canonical: the percent-encoding %3B is not allowed in a path segment (allowed: A-Z a-z 0-9 - _)'],
    ['/v1/a.b', "not-canonical: '.' is not allowed in a path segment (allowed: A-Z a-z 0-9 - _)"],
    ['/v1/a b', 'not-canonical: the character U+0020 is not allowed in a path segment (allowed: A-Z a-z 0-9 - _)'],
    ['/v1/a\u007f', 'not-canonical: the character U+007F is not allowed in a path segment (allowed: A-Z a-z 0-9 - _)'],
    ['/v1/a!', "not-canonical: '!' is not allowed in a path segment (allowed: A-Z a-z 0-9 - _)"],
  ]
  for (const [path, expected] of cases) t.equal(reasonOf(path), expected, JSON.stringify(path))
  const dottedReason = readRestPath('/v1/a;b', dotted)
  t.match(dottedReason.ok ? '' : dottedReason.problem.reason, /\(allowed: A-Z a-z 0-9 - _ and inner dots\)$/, 'with dots allowed, the rule says so')
  t.equal(problemOf('/v1/%61', dotted), 'ok /v1/a', 'a one-character segment with dots allowed')
})

t.test('loggablePath: the base as /, a long path cut at its bound', async (t) => {
  t.equal(loggablePath('' as CanonicalPath), '/')
  t.equal(loggablePath('/v1/payouts' as CanonicalPath), '/v1/payouts')
  const long = `/${'a'.repeat(LOGGED_PATH_CHARS * 2)}` as CanonicalPath
  t.equal(loggablePath(long), `${long.slice(0, LOGGED_PATH_CHARS)}…`)
  const exact = `/${'a'.repeat(LOGGED_PATH_CHARS - 1)}` as CanonicalPath
  t.equal(loggablePath(exact), exact, 'exactly at the bound: whole')
})

t.test('the refusal names the offending character without echoing the path', async (t) => {
  const reasonOf = (path: string, options = strict): string => {
    const reading = readRestPath(path, options)
    return reading.ok ? '' : reading.problem.reason
  }
  t.match(reasonOf('/v1/payouts;x=1'), /^';' is not allowed in a path segment \(allowed: A-Z a-z 0-9 - _\)$/)
  t.match(reasonOf('/v1/payouts%3B'), /^the percent-encoding %3B is not allowed/)
  t.match(reasonOf('/v1/payouts\u00a0'), /^the character U\+00A0 is not allowed/)
  t.match(reasonOf('/v1/payouts.', dotted), /may not start or end with a dot/)
  t.notMatch(reasonOf(`/v1/${'x'.repeat(5000)};`), /xxxx/, 'no client text beyond the character')
})

t.test('foldPath: lower case, no trailing slash, the base is /', async (t) => {
  const cases: Array<[string, string]> = [['', '/'], ['/', '/'], ['/V1/Payouts/', '/v1/payouts'], ['/v1/payouts', '/v1/payouts']]
  for (const [path, expected] of cases) t.equal(foldPath(path as CanonicalPath), expected, JSON.stringify(path))
})

t.test('isTokenEndpointPath: any segment starting with the token segment, in any case', async (t) => {
  const blocked = ['/auth/generate-bearer-token', '/AUTH/GENERATE-BEARER-TOKEN', '/Auth/Generate-Bearer-Token/', '/auth/generate-bearer-token/extra', '/v1/auth/generate-bearer-token', '/generate-bearer-tokens']
  for (const path of blocked) t.equal(isTokenEndpointPath(folded(path)), true, path)
  t.equal(isTokenEndpointPath(folded('/auth/generate-bearer-token.json', true)), true, 'with dots allowed, a suffix is no escape')
  for (const path of ['/auth', '/auth/refresh', '/v1/generate-bearer', '/v1/bearer-token', '/v1/payouts/generate', '/']) {
    t.equal(isTokenEndpointPath(folded(path)), false, path)
  }
})

/**
 * How the most lenient server we know of reads a path: every percent-encoding decoded (repeatedly),
 * compatibility forms folded, `;params` dropped, suffixes after a dot dropped, trailing dots,
 * spaces and punctuation trimmed, letters folded. Whatever the proxy admits must read the same to it
 * as the proxy's own folded reading: then no rule can judge one path while the provider serves another.
 */
function lenientReading (path: string): string {
  let text = path
  for (let i = 0; i < 4; i++) {
    try { text = decodeURIComponent(text) } catch { break }
  }
  return text.normalize('NFKC').split('/').map((segment) => segment
    .replace(/;.*$/, '')
    .replace(/\..*$/, '')
    .replace(/[\s~:@!$'()*+,=]+$/u, '')
    .toUpperCase().toLowerCase()).join('/').replace(/\/$/, '') || '/'
}

const HOSTILE = ['a', 'B', 'z', '0', '-', '_', '.', ';', '=', '%', '%2e', '%2E', '%2f', '%5c', '%25', '%3b', '%20', '%41', '%61', '%2d', '%5F',
  '%C2%A0', '%C5%BF', '%E2%84%AA', '%EF%BC%8E', '~', ':', '@', '!', '$', "'", '(', ')', '*', '+', ',', ' ', '\\', '\u00e9', '%00', '/']

t.test('property: whatever the spelling, a path is refused or the lenient reading equals the judged one', async (t) => {
  const segment = fc.array(fc.constantFrom(...HOSTILE), { minLength: 0, maxLength: 8 }).map((parts) => parts.join(''))
  const spelling = fc.array(segment, { minLength: 0, maxLength: 5 }).map((segments) => segments.map((s) => `/${s}`).join(''))
  let admitted = 0
  let refused = 0
  fc.assert(fc.property(spelling, fc.boolean(), (path, allowDots) => {
    const reading = readRestPath(path, { allowDots })
    if (!reading.ok) { refused++; return true }
    admitted++
    // Forwarded as read: segments of the admitted alphabet only, nothing left to decode.
    if (!/^(?:\/[A-Za-z0-9._-]+)*\/?$/.test(reading.path)) return false
    // The reader is idempotent: reading what is forwarded gives what was judged.
    const again = readRestPath(reading.path, { allowDots })
    if (!again.ok || again.path !== reading.path) return false
    return allowDots || lenientReading(reading.path) === reading.folded
  }), { numRuns: 20_000, seed: 34 })
  t.ok(admitted > 1000, `the generator admits paths too (${admitted})`)
  t.ok(refused > 1000, `and refuses many (${refused})`)
})
