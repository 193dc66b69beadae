/**
 * PROXY_ALLOWED_CLIENTS and the browser checks (client-access.ts) as the first root-level hook of
 * every proxy route: it runs before callers (SPEC §7: allowed clients are checked first, `sources`
 * only narrow them) and before any body is read. The proxy's own endpoints are not guarded here:
 * kubelet probes come from the node's address.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { ClientNotAllowedError } from '../errors.js'
import { resolveTarget } from '../routing/request-target.js'
import type { ClientAccess } from './client-access.js'

export const clientAccessHook = fp(async function clientAccessHook (
  app: FastifyInstance,
  options: { access: ClientAccess },
) {
  const { access } = options
  app.decorateRequest('target', null)
  app.decorateRequest('holdBody', false)
  app.addHook('onRequest', (request, _reply, done) => {
    const target = resolveTarget(request)
    if (target === null) { done(); return }
    request.target = target
    const remoteAddress = request.raw.socket.remoteAddress
    const decision = access.check(remoteAddress, request.headers)
    if (decision.ok) { done(); return }
    request.log.warn({ reason: decision.reason, remoteAddress }, 'client refused')
    done(new ClientNotAllowedError(`Refused: ${decision.reason}`))
  })
}, { name: 'client-access' })
