/**
 * Every refusal a proxied path can earn, from the one reading of request-target.ts, in SPEC §3's
 * order: traversal 400 -> PATH_NOT_CANONICAL 400 -> another environment's base 404 -> the token
 * endpoint 403. Registered after identity (SPEC §3: with callers, all of them after identity) and
 * before `allow`, so no rule ever judges a path that is refused.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { InvalidPathError, PathNotCanonicalError, RouteNotFoundError, TokenEndpointBlockedError, type ProxyError } from '../errors.js'
import { isTokenEndpointPath, loggablePath } from './canonical-path.js'
import type { RequestTarget } from './request-target.js'
import { reachesForeignBase } from './route-table.js'

export type PathVerdict =
  | { ok: true }
  | { ok: false, error: ProxyError, message: string, fields: Record<string, string | number | null> }

export function judgePath (target: RequestTarget): PathVerdict {
  const { problem, route, folded } = target
  if (problem !== null) {
    const fields = { reason: problem.reason, segment: problem.segment, route: route.prefix }
    return problem.kind === 'traversal'
      ? { ok: false, error: new InvalidPathError(problem.reason), message: 'request path refused', fields }
      : { ok: false, error: new PathNotCanonicalError(problem.reason, problem.segment), message: 'path not canonical: refused', fields }
  }
  if (reachesForeignBase(folded, route.foreignPaths)) {
    return { ok: false, error: new RouteNotFoundError(), message: 'path reaches another environment\'s base: refused', fields: { path: loggablePath(folded), environment: route.environment } }
  }
  if (isTokenEndpointPath(folded)) {
    return { ok: false, error: new TokenEndpointBlockedError(), message: 'token endpoint request refused', fields: { path: loggablePath(folded) } }
  }
  return { ok: true }
}

export const pathGuard = fp(async function pathGuard (app: FastifyInstance) {
  app.addHook('onRequest', (request, _reply, done) => {
    const target = request.target
    if (target === null) { done(); return }
    const verdict = judgePath(target)
    if (verdict.ok) { done(); return }
    request.log.warn(
      { ...verdict.fields, caller: request.caller?.id ?? null, code: verdict.error.code },
      verdict.message,
    )
    done(verdict.error)
  })
}, { name: 'path-guard' })
