/**
 * SPEC §15 with the company's identity provider (a real oidc-provider, identity-provider.ts):
 * discovery and the 401 that points at it; the provider's own JWT access tokens used by the
 * official MCP client, mapped by the callers file's `oauth` entries to a caller whose rules judge
 * each tool call (allowed, refused by an amount limit, held for approval); every token BAD_INPUTS
 * names refused with `invalid_token` (or 403 `insufficient_scope`); a caller key still works on
 * `/mcp`; no token in any log line.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { SignJWT, UnsecuredJWT } from 'jose'
import { keySha256 } from '../../src/callers/judge-caller.js'
import { providerEnv, startProvider, startProxy, waitReady, type RunningProxy } from '../helpers/harness.js'
import { assertToolError, call, connect, SEALING_SECRET, SIGNING_SECRET, tempDir } from '../mcp/mcp-rig.js'
import { newSigningKey, startIdentityProvider, type IdentityProvider } from './identity-provider.js'

const RESOURCE = 'https://agents.example.com/mcp'
const HEADER_KEY = 'pak_oauth-header-agent-0123456789abcdefghijklmnop'

interface Rig { idp: IdentityProvider, proxy: RunningProxy }

async function startRig (t: Test, env: Record<string, string> = {}): Promise<Rig> {
  const idp = await startIdentityProvider(t, { resource: RESOURCE, clients: ['claims-agent', 'stranger'] })
  const provider = await startProvider(t)
  const dir = tempDir(t)
  writeFileSync(join(dir, 'callers.yaml'), `callers:
  - id: oauth-agent
    oauth: [{ clientId: claims-agent }]
    allow: [{ environments: [sandbox], interfaces: [fiat], methods: [GET, POST], paths: ["/v1/payouts", "/transactions/*"] }]
    amountLimits:
      - { amount: /amount, currency: /currency, perRequest: { KES: 400 }, approveAbove: { KES: 100 } }
  - id: header-agent
    keySha256: ${keySha256(HEADER_KEY)}
    allow: [{ environments: [sandbox], interfaces: [fiat], methods: [GET] }]
  - id: subject-agent
    oauth: [{ subject: person-7, clientId: desk-app }]
    allow: [{ environments: [sandbox], interfaces: [fiat], methods: [GET] }]
`)
  const proxy = await startProxy(t, providerEnv(provider, {
    PROXY_CALLERS_FILE: join(dir, 'callers.yaml'),
    PROXY_MCP: 'on',
    PROXY_DEFAULT_ENVIRONMENT: 'sandbox',
    PROXY_MCP_OAUTH_ISSUER: idp.issuer,
    PROXY_MCP_PUBLIC_URL: RESOURCE,
    PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET,
    PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET,
    PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db'),
    LOG_LEVEL: 'info',
    ...env,
  }))
  await waitReady(proxy)
  return { idp, proxy }
}

async function postMcp (proxy: RunningProxy, authorization?: string): Promise<Response> {
  return await fetch(`${proxy.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization === undefined ? {} : { authorization }) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  })
}

const payout = (reference: string, amount: number): Record<string, unknown> => ({
  interface: 'fiat', method: 'POST', path: '/v1/payouts', body: { amount, currency: 'KES', externalReference: reference },
})

t.test('discovery and the 401 that points at it', async (t) => {
  const { idp, proxy } = await startRig(t)
  for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
    const res = await fetch(`${proxy.url}${path}`)
    t.equal(res.status, 200, path)
    t.same(await res.json(), { resource: RESOURCE, authorization_servers: [idp.issuer], bearer_methods_supported: ['header'], scopes_supported: ['payments'], resource_name: 'payments-auth-proxy' }, `${path}: RFC 9728's document`)
  }
  const none = await postMcp(proxy)
  t.equal(none.status, 401)
  t.equal(none.headers.get('www-authenticate'), 'Bearer resource_metadata="https://agents.example.com/.well-known/oauth-protected-resource/mcp", scope="payments"')
  t.match(await none.json(), { error: { code: 'CALLER_UNAUTHENTICATED' } })
})

t.test('the identity provider\'s token is the mapped caller\'s: allowed, refused by an amount limit, held for approval', async (t) => {
  const { idp, proxy } = await startRig(t)
  const token = await idp.token('claims-agent')
  const agent = await connect(t, proxy, token)
  const names = (await agent.listTools()).tools.map((tool) => tool.name)
  t.ok(names.includes('payments_request'), 'the caller\'s tools are listed')
  const sent = await call(agent, 'payments_request', payout('oauth-1', 50))
  t.equal(sent.structuredContent['status'], 200, 'a payout within the limits is forwarded')
  assertToolError(t, await call(agent, 'payments_request', payout('oauth-2', 500)), 403, 'AMOUNT_LIMIT_EXCEEDED')
  const held = await call(agent, 'payments_request', payout('oauth-3', 150))
  t.match(held.structuredContent, { status: 202, approval: { status: 'pending', caller: 'oauth-agent' } }, 'above approveAbove it waits for a person')
  const limits = await call(agent, 'get_limits', {})
  t.match(limits.structuredContent, { limits: [{ currency: 'KES', perRequest: '400', approveAbove: '100' }] }, 'get_limits tells the mapped caller its own limits')
  const lines = proxy.logs.find('proxied request').filter((line) => line['via'] === 'mcp')
  t.ok(lines.length > 0 && lines.every((line) => line['caller'] === 'oauth-agent' && line['auth'] === 'oauth' && line['clientId'] === 'claims-agent'), 'the access lines name the caller, auth oauth and the client')
  t.notOk(proxy.logs.lines.join('\n').includes(token), 'the token is in no log line')
  t.notOk(proxy.logs.lines.join('\n').includes(token.split('.')[2] ?? token), 'nor its signature')
})

t.test('a caller key still works on /mcp with OAuth on', async (t) => {
  const { proxy } = await startRig(t)
  const agent = await connect(t, proxy, HEADER_KEY)
  t.ok((await agent.listTools()).tools.length > 0)
  const unknown = await postMcp(proxy, 'Bearer pak_not-a-key-and-not-a-jwt')
  t.equal(unknown.status, 401, 'an unknown key is an invalid token')
  t.match(unknown.headers.get('www-authenticate'), /error="invalid_token"/)
})

t.test('tokens BAD_INPUTS names: 401 invalid_token, or 403 insufficient_scope', async (t) => {
  const { idp, proxy } = await startRig(t)
  const valid = { iss: idp.issuer, aud: RESOURCE, client_id: 'claims-agent', sub: 'claims-agent', scope: 'payments' }
  const nowS = Math.floor(Date.now() / 1000)
  const stranger = await idp.token('stranger')
  const outsider = await newSigningKey('key-1')
  const publicPem = Buffer.from(JSON.stringify(idp.keys()[0]?.publicJwk))
  const cases: Array<[string, string]> = [
    ['alg none', new UnsecuredJWT(valid).setIssuedAt().setExpirationTime('10m').encode()],
    ['HMAC signed with the public key\'s bytes', await new SignJWT(valid).setProtectedHeader({ alg: 'HS256', kid: 'key-1' }).setExpirationTime('10m').sign(publicPem)],
    ['an unknown kid', await idp.sign(valid, { key: { ...outsider, kid: 'key-unknown' } })],
    ['a key the provider never published, under its kid', await idp.sign(valid, { key: outsider })],
    ['a foreign issuer', await idp.sign({ ...valid, iss: 'https://elsewhere.example.com' })],
    ['a wrong audience', await idp.sign({ ...valid, aud: 'https://other.example.com/mcp' })],
    ['expired beyond the leeway', await idp.sign({ ...valid, exp: nowS - 120 })],
    ['not valid for two more minutes', await idp.sign({ ...valid, nbf: nowS + 120 })],
    ['no exp', (await idp.sign({ ...valid, exp: undefined }))],
    ['a valid token of an unmapped client', stranger],
    ['malformed', 'eyJ.not.a-jwt'],
  ]
  for (const [label, token] of cases) {
    const res = await postMcp(proxy, `Bearer ${token}`)
    t.equal(res.status, 401, `${label}: 401`)
    t.match(res.headers.get('www-authenticate'), /^Bearer resource_metadata="[^"]+", scope="payments", error="invalid_token"$/, `${label}: invalid_token`)
    const body = await res.text()
    t.match(JSON.parse(body), { error: { code: 'CALLER_UNAUTHENTICATED' } }, `${label}: the contract's body`)
    t.notOk(body.includes(token), `${label}: the body does not echo the token`)
  }
  const withinLeeway = await postMcp(proxy, `Bearer ${await idp.sign({ ...valid, exp: nowS - 30 })}`)
  t.equal(withinLeeway.status, 200, 'expired 30 s ago is within the 60 s leeway')
  const noScope = await postMcp(proxy, `Bearer ${await idp.sign({ ...valid, scope: 'openid profile' })}`)
  t.equal(noScope.status, 403, 'a token whose scopes lack payments: 403')
  t.equal(noScope.headers.get('www-authenticate'), 'Bearer resource_metadata="https://agents.example.com/.well-known/oauth-protected-resource/mcp", scope="payments", error="insufficient_scope"')
  const scp = await postMcp(proxy, `Bearer ${await idp.sign({ ...valid, scope: undefined, scp: ['payments'] })}`)
  t.equal(scp.status, 200, 'an scp list with payments (Okta, Entra) is taken')
  const bySubject = await postMcp(proxy, `Bearer ${await idp.sign({ ...valid, sub: 'person-7', client_id: 'desk-app' })}`)
  t.equal(bySubject.status, 200, 'a subject and a client, both matched: subject-agent')
  const byAzp = await postMcp(proxy, `Bearer ${await idp.sign({ ...valid, sub: 'person-7', client_id: undefined, azp: 'desk-app' })}`)
  t.equal(byAzp.status, 200, 'azp stands for client_id when the token has none')
  const otherSubject = await postMcp(proxy, `Bearer ${await idp.sign({ ...valid, sub: 'person-8', client_id: 'desk-app' })}`)
  t.equal(otherSubject.status, 401, 'the client of a match with another subject: no caller')
  const text = proxy.logs.lines.join('\n')
  for (const [label, token] of cases) t.notOk(text.includes(token), `${label}: not logged`)
})

t.test('with OAuth off nothing of §15 is served', async (t) => {
  const { proxy } = await startRig(t, { PROXY_MCP_OAUTH_ISSUER: '', PROXY_MCP_PUBLIC_URL: '' })
  const res = await fetch(`${proxy.url}/.well-known/oauth-protected-resource/mcp`, { headers: { authorization: `Bearer ${HEADER_KEY}` } })
  t.equal(res.status, 404, 'an unknown route to an identified caller')
  const none = await postMcp(proxy)
  t.equal(none.status, 401)
  t.equal(none.headers.get('www-authenticate'), 'Bearer realm="payments-auth-proxy"', 'no resource_metadata: header clients are never sent into an OAuth flow')
})
