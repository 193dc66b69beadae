/**
 * `PROXY_MCP_PUBLIC_URL` and `PROXY_MCP_OAUTH*` (SPEC §15) -> how `/mcp` takes OAuth access tokens,
 * or null when OAuth is off (nothing of §15 is then served, so header clients are never sent into an
 * OAuth flow). This release verifies an external authorization server's tokens; the embedded one
 * and `PROXY_MCP_LISTEN` are refused by name rather than ignored (docs/agents.md).
 */
import type { RawSettings } from './schema.js'

export interface OAuthConfig {
  /** The authorization server's issuer identifier, exactly as its tokens' `iss` carries it. */
  issuer: string
  /** What a token's `aud` must contain. */
  audience: string
  /** The protected resource (RFC 8707, RFC 9728): `/mcp` as clients reach it. */
  resource: string
  /** The path-inserted metadata URL of RFC 9728 §3.1, sent in the 401's `resource_metadata`. */
  resourceMetadataUrl: string
}

const OAUTH_VARIABLES = ['PROXY_MCP_PUBLIC_URL', 'PROXY_MCP_OAUTH_ISSUER', 'PROXY_MCP_OAUTH_AUDIENCE', 'PROXY_MCP_OAUTH'] as const

export function resolveOAuth (settings: RawSettings, problems: string[], warnings: string[]): OAuthConfig | null {
  if (settings.PROXY_MCP_LISTEN !== undefined) problems.push('PROXY_MCP_LISTEN is not in this release: serve /mcp on the proxy listener behind your TLS ingress (docs/agents.md)')
  if (settings.PROXY_MCP_OAUTH === 'embedded') problems.push('PROXY_MCP_OAUTH=embedded is not in this release: set PROXY_MCP_OAUTH_ISSUER to your identity provider (docs/agents.md)')
  const issuerText = settings.PROXY_MCP_OAUTH_ISSUER
  if (issuerText === undefined) {
    const given = OAUTH_VARIABLES.filter((name) => name !== 'PROXY_MCP_OAUTH' && settings[name] !== undefined)
    if (given.length > 0) warnings.push(`${given.join(', ')} set but PROXY_MCP_OAUTH_ISSUER is not: /mcp takes caller keys only`)
    return null
  }
  if (settings.PROXY_MCP !== 'on') problems.push('PROXY_MCP_OAUTH_ISSUER needs PROXY_MCP=on: the tokens are for /mcp (SPEC §15)')
  const issuer = webUrl(issuerText)
  if (issuer === null || issuer.search !== '' || issuer.hash !== '') {
    problems.push('PROXY_MCP_OAUTH_ISSUER must be the authorization server\'s issuer, an https URL without query or fragment (http only on loopback), such as https://login.example.com/realms/agents')
  }
  const publicUrl = publicUrlOf(settings, problems)
  if (issuer === null || publicUrl === null) return null
  const resource = publicUrl.href
  return {
    issuer: issuerText,
    audience: settings.PROXY_MCP_OAUTH_AUDIENCE ?? resource,
    resource,
    resourceMetadataUrl: `${publicUrl.origin}/.well-known/oauth-protected-resource${publicUrl.pathname === '/' ? '' : publicUrl.pathname}`,
  }
}

function publicUrlOf (settings: RawSettings, problems: string[]): URL | null {
  const text = settings.PROXY_MCP_PUBLIC_URL
  if (text === undefined) {
    if (settings.PROXY_PORT === 0) {
      problems.push('PROXY_MCP_PUBLIC_URL is required when PROXY_PORT is 0: the URL agents reach /mcp at, such as https://agents.example.com/mcp')
      return null
    }
    const host = settings.PROXY_HOST.includes(':') ? `[${settings.PROXY_HOST}]` : settings.PROXY_HOST
    return new URL(`http://${host}:${settings.PROXY_PORT}/mcp`)
  }
  const url = webUrl(text)
  if (url === null || url.search !== '' || url.hash !== '' || !url.pathname.endsWith('/mcp')) {
    problems.push('PROXY_MCP_PUBLIC_URL must be the https URL agents reach /mcp at, ending in /mcp, without query or fragment (http only on loopback), such as https://agents.example.com/mcp')
    return null
  }
  return url
}

/** An absolute https URL, or http on a loopback host: tokens and codes never cross a network in clear. */
export function webUrl (text: string): URL | null {
  const url = URL.canParse(text) ? new URL(text) : null
  if (url === null || url.username !== '' || url.password !== '') return null
  if (url.protocol === 'https:') return url
  return url.protocol === 'http:' && (url.hostname === 'localhost' || url.hostname === '[::1]' || url.hostname.startsWith('127.')) ? url : null
}
