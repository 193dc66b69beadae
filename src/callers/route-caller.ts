/**
 * The caller of a request to one of the sidecar's own routes (approvals, payments, limits): SPEC
 * §5's client rules, then §7's identity, as for proxied requests. Throws the refusal.
 */
import type { FastifyRequest } from 'fastify'
import type { ClientAccess } from '../access/client-access.js'
import { CallerUnauthenticatedError, ClientNotAllowedError } from '../errors.js'
import type { CallerSpec } from './callers-file.js'
import { authorizationsOf } from './callers-plugin.js'
import { identify, type CallerIndex } from './judge-caller.js'

export function routeCaller (access: ClientAccess, callers: CallerIndex, request: FastifyRequest): CallerSpec {
  const decision = access.check(request.raw.socket.remoteAddress, request.headers)
  if (!decision.ok) throw new ClientNotAllowedError(`Refused: ${decision.reason}`)
  // A tool call of an agent signed in with OAuth (SPEC §15) is its caller's from the start.
  if (request.callerSpec !== null) return request.callerSpec
  const caller = identify(callers, { authorizations: authorizationsOf(request), peer: request.raw.socket.remoteAddress ?? '' })
  if (typeof caller === 'string') throw new CallerUnauthenticatedError(caller)
  return caller
}
