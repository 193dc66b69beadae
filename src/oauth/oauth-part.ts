/**
 * OAuth's share of the proxy (SPEC §15), loaded only with OAuth on: the authorization server's
 * metadata read before the start goes on (a start that cannot read it stops with one line), the
 * access-token judge `/mcp` asks for a bearer value that is no caller key, and the protected
 * resource's metadata beside `/mcp`.
 */
import type { CallersHolder } from '../callers/callers-holder.js'
import type { TokenCallers } from '../callers/token-callers.js'
import { ConfigError } from '../config/config-error.js'
import type { OAuthConfig } from '../config/oauth-settings.js'
import type { ProxyContext, ProxyPart } from '../feature/feature.js'
import { createAccessTokenJudge } from './access-token-judge.js'
import { discoveryRoutes } from './discovery-routes.js'
import { IssuerMetadataError, readIssuerMetadata } from './issuer-metadata.js'

declare module '../feature/feature.js' {
  interface SharedParts { mcpTokens: TokenCallers }
}

export async function oauthPart (
  context: ProxyContext & { callers: CallersHolder },
  config: OAuthConfig,
): Promise<ProxyPart> {
  const { log, clock, callers, shared } = context
  let jwksUri: URL
  try {
    ({ jwksUri } = await readIssuerMetadata(config.issuer))
  } catch (err) {
    if (err instanceof IssuerMetadataError) throw new ConfigError([`PROXY_MCP_OAUTH_ISSUER: ${err.message}`])
    throw err
  }
  shared.mcpTokens = createAccessTokenJudge({ config, jwksUri, callers: callers.current, clock, log })
  log.info({ issuer: config.issuer, resource: config.resource }, 'OAuth access tokens from the authorization server are taken on /mcp')
  return {
    async register (app, parts) {
      await app.register(discoveryRoutes, { config, access: parts.access })
    },
  }
}
