/** `PROXY_MCP_PUBLIC_URL` and `PROXY_MCP_OAUTH*` (SPEC §15) read, refused and warned about as the start reads them. */
import t from 'tap'
import { getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/server'
import { resolveOAuth } from '../../src/config/oauth-settings.js'
import type { RawSettings } from '../../src/config/schema.js'

const ISSUER = 'https://login.example.com/realms/agents'

function read (over: Partial<RawSettings>): { config: ReturnType<typeof resolveOAuth>, problems: string[], warnings: string[] } {
  const problems: string[] = []
  const warnings: string[] = []
  const settings = { PROXY_MCP: 'on', PROXY_HOST: '127.0.0.1', PROXY_PORT: 8080, ...over } as RawSettings
  return { config: resolveOAuth(settings, problems, warnings), problems, warnings }
}

t.test('off unless an issuer is set; a public URL alone is named in a warning', async (t) => {
  t.same(read({}), { config: null, problems: [], warnings: [] })
  t.match(read({ PROXY_MCP_PUBLIC_URL: 'https://agents.example.com/mcp' }).warnings, [/PROXY_MCP_PUBLIC_URL set but PROXY_MCP_OAUTH_ISSUER is not/])
})

t.test('the resource, the audience and the path-inserted metadata URL', async (t) => {
  t.same(read({ PROXY_MCP_OAUTH_ISSUER: ISSUER, PROXY_MCP_PUBLIC_URL: 'https://agents.example.com/mcp' }).config, {
    issuer: ISSUER,
    audience: 'https://agents.example.com/mcp',
    resource: 'https://agents.example.com/mcp',
    resourceMetadataUrl: 'https://agents.example.com/.well-known/oauth-protected-resource/mcp',
  })
  t.match(read({ PROXY_MCP_OAUTH_ISSUER: ISSUER, PROXY_MCP_PUBLIC_URL: 'https://example.com/agents/mcp', PROXY_MCP_OAUTH_AUDIENCE: 'api://payments' }).config, {
    audience: 'api://payments', resourceMetadataUrl: 'https://example.com/.well-known/oauth-protected-resource/agents/mcp',
  }, 'an audience of its own (Entra\'s api://…); a prefix of the ingress kept in the metadata URL')
  t.match(read({ PROXY_MCP_OAUTH_ISSUER: ISSUER }).config, { resource: 'http://127.0.0.1:8080/mcp' }, 'by default the proxy listener')
})

t.test('the metadata URL is the one the official SDK derives (RFC 9728 §3.1)', async (t) => {
  for (const url of ['https://agents.example.com/mcp', 'https://example.com/agents/mcp', 'http://127.0.0.1:8080/mcp', 'https://example.com:8443/a/b/mcp']) {
    t.equal(read({ PROXY_MCP_OAUTH_ISSUER: ISSUER, PROXY_MCP_PUBLIC_URL: url }).config?.resourceMetadataUrl, getOAuthProtectedResourceMetadataUrl(new URL(url)), url)
  }
})

t.test('refusals name the variable', async (t) => {
  const cases: Array<[string, Partial<RawSettings>, RegExp]> = [
    ['MCP off', { PROXY_MCP: 'off', PROXY_MCP_OAUTH_ISSUER: ISSUER }, /PROXY_MCP_OAUTH_ISSUER needs PROXY_MCP=on/],
    ['an http issuer off loopback', { PROXY_MCP_OAUTH_ISSUER: 'http://login.example.com' }, /PROXY_MCP_OAUTH_ISSUER must be/],
    ['an issuer with a query', { PROXY_MCP_OAUTH_ISSUER: `${ISSUER}?x=1` }, /PROXY_MCP_OAUTH_ISSUER must be/],
    ['an issuer with credentials', { PROXY_MCP_OAUTH_ISSUER: 'https://user:pw@login.example.com' }, /PROXY_MCP_OAUTH_ISSUER must be/],
    ['not a URL', { PROXY_MCP_OAUTH_ISSUER: 'login.example.com' }, /PROXY_MCP_OAUTH_ISSUER must be/],
    ['a public URL not ending in /mcp', { PROXY_MCP_OAUTH_ISSUER: ISSUER, PROXY_MCP_PUBLIC_URL: 'https://agents.example.com/' }, /PROXY_MCP_PUBLIC_URL must be/],
    ['a public URL in clear off loopback', { PROXY_MCP_OAUTH_ISSUER: ISSUER, PROXY_MCP_PUBLIC_URL: 'http://agents.example.com/mcp' }, /PROXY_MCP_PUBLIC_URL must be/],
    ['port 0 and no public URL', { PROXY_MCP_OAUTH_ISSUER: ISSUER, PROXY_PORT: 0 }, /PROXY_MCP_PUBLIC_URL is required when PROXY_PORT is 0/],
    ['the embedded server, not in this release', { PROXY_MCP_OAUTH: 'embedded' }, /PROXY_MCP_OAUTH=embedded is not in this release/],
    ['a listener of its own, not in this release', { PROXY_MCP_LISTEN: '0.0.0.0:8444' }, /PROXY_MCP_LISTEN is not in this release/],
  ]
  for (const [name, over, problem] of cases) t.match(read(over).problems, [problem], name)
  t.same(read({ PROXY_MCP_OAUTH_ISSUER: 'http://127.0.0.1:9000/idp', PROXY_MCP_PUBLIC_URL: 'http://localhost:8080/mcp' }).problems, [], 'http on loopback, for a laptop')
})
