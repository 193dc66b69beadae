/**
 * Agents that sign in (SPEC §15) as a feature: `/mcp` takes OAuth access tokens of the company's
 * authorization server beside caller keys, mapped to callers by the callers file's `oauth`
 * entries. Listed before MCP, which reads the judge it provides.
 */
import { resolveOAuth } from '../config/oauth-settings.js'
import type { Feature } from '../feature/feature.js'

export const oauthFeature: Feature = {
  name: 'oauth',
  settings: ({ settings, problems, warnings }) => ({ oauth: resolveOAuth(settings, problems, warnings) }),
  proxy: async (context) => {
    const { config, callers } = context
    if (config.oauth === null || !config.mcp.enabled || callers === null) return null
    return await (await import('./oauth-part.js')).oauthPart({ ...context, callers }, config.oauth)
  },
  async check ({ config }) {
    if (config.oauth === null) return null
    const { readIssuerMetadata } = await import('./issuer-metadata.js')
    try {
      const metadata = await readIssuerMetadata(config.oauth.issuer)
      return { ok: true, lines: [`ok    OAuth: the authorization server's metadata read (${metadata.readFrom}); tokens for ${config.oauth.audience}`] }
    } catch (err) {
      return { ok: false, lines: [`FAIL  OAuth: PROXY_MCP_OAUTH_ISSUER: ${err instanceof Error ? err.message : 'unreadable'}`] }
    }
  },
}
