/**
 * The sidecar's state for a person (SPEC §14): each environment's token (whether one is held and
 * until when, never the token) and the egress IP to allowlist.
 */
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../clock.js'
import type { ConsoleStatus } from './console-deps.js'
import { shownTime, span } from './display.js'
import { renderPage } from './render.js'

export async function statusPage (
  app: FastifyInstance,
  options: { status: ConsoleStatus, clock: Clock },
): Promise<void> {
  app.get('/status', async (request, reply) => {
    const nowMs = options.clock.wallMs()
    const tokens = options.status.tokens().map((t) => ({
      environment: t.environment,
      ready: t.ready,
      expires: t.expiresAt === null ? null : shownTime(t.expiresAt * 1000),
      expiresIn: t.expiresAt === null ? null : span(t.expiresAt * 1000 - nowMs),
    }))
    return await renderPage(request, reply, 'status', { title: 'Tokens and egress IP', nav: 'status', tokens, egressIp: options.status.egressIp() })
  })
}
