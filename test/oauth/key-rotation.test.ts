/**
 * SPEC §15: the identity provider rotates its signing key (the new one published before it signs
 * with it). A token with a `kid` the proxy has not seen makes it fetch the JWKS again, at most once
 * a minute: a flood of unknown `kid`s costs the provider no more than that one fetch, and a minute
 * after the last fetch the new key's tokens are taken. About 62 s, most of it waiting for the minute.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'
import { tempDir } from '../mcp/mcp-rig.js'
import { newSigningKey, startIdentityProvider } from './identity-provider.js'

const RESOURCE = 'https://agents.example.com/mcp'
t.setTimeout(180_000)

t.test('a rotated key: fetched again on an unknown kid, at most once a minute', async (t) => {
  const idp = await startIdentityProvider(t, { resource: RESOURCE, clients: ['claims-agent'] })
  const provider = await startProvider(t)
  const dir = tempDir(t)
  writeFileSync(join(dir, 'callers.yaml'), 'callers:\n  - { id: oauth-agent, oauth: [{ clientId: claims-agent }], allow: [{ environments: [sandbox] }] }\n')
  const proxy = await startProxy(t, providerEnv(provider, {
    PROXY_CALLERS_FILE: join(dir, 'callers.yaml'), PROXY_MCP: 'on', PROXY_MCP_OAUTH_ISSUER: idp.issuer, PROXY_MCP_PUBLIC_URL: RESOURCE,
  }))
  await waitReady(proxy)
  const status = async (token: string): Promise<number> => (await fetch(`${proxy.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  })).status

  t.equal(await status(await idp.token('claims-agent')), 200, 'a token signed with the first key')
  const firstFetchMs = Date.now()
  t.equal(idp.jwksFetches(), 1, 'the keys were fetched once')
  const next = await idp.rotate()
  const rotated = await idp.token('claims-agent')
  t.equal((JSON.parse(Buffer.from(rotated.split('.')[0] ?? '', 'base64url').toString('utf8')) as { kid?: string }).kid, next.kid, 'the provider signs with the new key now')
  t.equal(await status(rotated), 401, 'within the minute the new kid is not fetched for')
  const strangers = await Promise.all(Array.from({ length: 20 }, async (_, i) => await idp.sign(
    { iss: idp.issuer, aud: RESOURCE, client_id: 'claims-agent' },
    { key: { ...await newSigningKey(`flood-${i}`) } },
  )))
  const flood = await Promise.all(strangers.map(async (token) => await status(token)))
  t.ok(flood.every((s) => s === 401), 'twenty unknown kids: all 401')
  t.ok(idp.jwksFetches() <= 2, `and at most one more fetch of the keys (${idp.jwksFetches()} in all)`)
  const fetchesBefore = idp.jwksFetches()
  await sleep(Math.max(0, firstFetchMs + 61_000 - Date.now()))
  t.equal(await status(rotated), 200, 'a minute after the last fetch, the new key\'s token is taken')
  t.ok(idp.jwksFetches() <= fetchesBefore + 1, 'with one fetch')
  t.equal(await status(await idp.token('claims-agent')), 200, 'and the provider\'s next token too')
})
