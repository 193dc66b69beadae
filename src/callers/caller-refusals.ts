/**
 * SPEC §7 audit of a refusal by a caller rule: one warn line with the caller id and the code, and
 * one count under the same labels. Shared by the identity/allow/rate/reference step and the amount
 * step, so both speak of a caller the same way in logs and metrics. The line also says what was
 * asked (method, canonical path, environment, interface) and, when a rule did not match, which
 * field, so a refusal can be explained from the log alone.
 */
import type { FastifyRequest } from 'fastify'
import { Counter, type Registry } from 'prom-client'
import type { ProxyError } from '../errors.js'
import { loggablePath } from '../routing/canonical-path.js'

/** Returns the error, so a hook can `throw refuse(request, callerId, error)`. */
export type RefuseCaller = (
  request: FastifyRequest,
  callerId: string,
  error: ProxyError,
  mismatch?: string,
) => ProxyError

export function createCallerRefusals (registry: Registry, metricPrefix: string): RefuseCaller {
  const refusals = new Counter({
    name: `${metricPrefix}caller_refusals_total`,
    help: 'Requests refused by a caller rule (SPEC §7), by caller and code',
    labelNames: ['caller', 'code'],
    registers: [registry],
  })
  return function refuse (request, callerId, error, mismatch) {
    refusals.inc({ caller: callerId, code: error.code })
    const target = request.target
    // `caller`, as in the access line: one field name for the caller across every log line.
    request.log.warn({
      caller: callerId,
      code: error.code,
      method: request.method,
      path: target === null ? undefined : loggablePath(target.path),
      environment: target?.route.environment ?? undefined,
      interface: target?.route.interface,
      mismatch,
    }, 'caller refused')
    return error
  }
}
