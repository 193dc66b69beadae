/**
 * SPEC §3's order of path refusals as a table over judgePath, no sockets: traversal 400 ->
 * PATH_NOT_CANONICAL 400 -> another environment's base 404 -> the token endpoint 403 -> pass.
 */
import t from 'tap'
import { readRestPath, type CanonicalPath } from '../../src/routing/canonical-path.js'
import { judgePath } from '../../src/routing/path-guard.js'
import type { RequestTarget } from '../../src/routing/request-target.js'
import type { RouteSpec } from '../../src/routing/route-table.js'

const ROUTE: RouteSpec = {
  prefix: '/production/crypto', environment: 'production', interface: 'crypto', upstream: { origin: 'https://crypto.example', basePath: '/api' }, problem: null, foreignPaths: ['/sandbox'],
}

function targetOf (rest: string): RequestTarget {
  const reading = readRestPath(rest, { allowDots: false })
  const none = '' as CanonicalPath
  return reading.ok
    ? { route: ROUTE, path: reading.path, folded: reading.folded, query: '', problem: null }
    : { route: ROUTE, path: none, folded: none, query: '', problem: reading.problem }
}

t.test('judgePath: the first refusal that applies, in the SPEC\'s order', async (t) => {
  const cases: Array<[string, string]> = [
    ['/v1/wallets', 'pass'],
    ['', 'pass'],
    ['/Sandboxes/x', 'pass'],
    ['/sandbox;x/../auth/generate-bearer-token', 'INVALID_PATH'],
    ['/sandbox;x/auth/generate-bearer-token', 'PATH_NOT_CANONICAL'],
    ['/Sandbox/auth/generate-bearer-token', 'ROUTE_NOT_FOUND'],
    ['/sandbox/', 'ROUTE_NOT_FOUND'],
    ['/v1/Auth/Generate-Bearer-Token/', 'TOKEN_ENDPOINT_BLOCKED'],
  ]
  for (const [rest, expected] of cases) {
    const verdict = judgePath(targetOf(rest))
    t.equal(verdict.ok ? 'pass' : verdict.error.code, expected, JSON.stringify(rest))
  }
})

t.test('judgePath: the log fields name the segment and the route, never the raw path', async (t) => {
  const verdict = judgePath(targetOf('/v1/payouts;x=1'))
  t.same(verdict.ok ? null : verdict.fields, { reason: "';' is not allowed in a path segment (allowed: A-Z a-z 0-9 - _)", segment: 2, route: '/production/crypto' })
  t.equal(verdict.ok ? '' : verdict.message, 'path not canonical: refused')
})
