/**
 * RFC 9728 Protected Resource Metadata for `/mcp` (SPEC §15), at the path-inserted URL the 401
 * names and at the bare one older clients ask for; only with OAuth on. §5's client rules apply as
 * on `/mcp`, whose listener this is; the document names no secret.
 */
import type { FastifyInstance } from 'fastify'
import type { ClientAccess } from '../access/client-access.js'
import type { OAuthConfig } from '../config/oauth-settings.js'
import { ClientNotAllowedError } from '../errors.js'
import { SCOPE } from './challenge.js'

export const METADATA_PATHS = ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource'] as const

export function protectedResourceMetadata (config: OAuthConfig): Record<string, unknown> {
  return {
    resource: config.resource,
    authorization_servers: [config.issuer],
    bearer_methods_supported: ['header'],
    scopes_supported: [SCOPE],
    resource_name: 'payments-auth-proxy',
  }
}

export async function discoveryRoutes (
  app: FastifyInstance,
  options: { config: OAuthConfig, access: ClientAccess },
): Promise<void> {
  const body = JSON.stringify(protectedResourceMetadata(options.config))
  for (const url of METADATA_PATHS) {
    app.get(url, async (request, reply) => {
      const decision = options.access.check(request.raw.socket.remoteAddress, request.headers)
      if (!decision.ok) throw new ClientNotAllowedError(`Refused: ${decision.reason}`)
      return await reply.header('cache-control', 'max-age=300').type('application/json').send(body)
    })
  }
}
