/**
 * SPEC §15 as an operator meets it with the built process: `check` reads the authorization server's
 * metadata and says so; a start that cannot read it stops with one line; a start that can serves
 * the protected resource's metadata.
 */
import { writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { runCli } from '../helpers/child-proxy.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { tempDir } from '../mcp/mcp-rig.js'
import { startIdentityProvider } from './identity-provider.js'

const RESOURCE = 'https://agents.example.com/mcp'

t.test('check and start, with the metadata readable and not', async (t) => {
  const idp = await startIdentityProvider(t, { resource: RESOURCE, clients: ['claims-agent'] })
  const provider = await startProvider(t)
  // An address that answers 404 to everything: no metadata there.
  const empty = createServer((_req, res) => { res.statusCode = 404; res.end() })
  await new Promise<void>((resolve) => empty.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { empty.close() })
  const dir = tempDir(t)
  writeFileSync(join(dir, 'callers.yaml'), 'callers:\n  - { id: oauth-agent, oauth: [{ clientId: claims-agent }], allow: [{ environments: [sandbox] }] }\n')
  const env = (issuer: string): Record<string, string | undefined> => ({
    ...providerEnv(provider), PROXY_CALLERS_FILE: join(dir, 'callers.yaml'), PROXY_MCP: 'on', PROXY_MCP_OAUTH_ISSUER: issuer, PROXY_MCP_PUBLIC_URL: RESOURCE,
  })

  const good = runCli(t, ['check'], env(idp.issuer))
  t.equal((await good.exited).code, 0, 'check passes')
  t.match(good.stdout(), new RegExp(`ok {4}OAuth: the authorization server's metadata read \\(${idp.issuer}/\\.well-known/oauth-authorization-server\\)`))

  const emptyIssuer = `http://127.0.0.1:${(empty.address() as AddressInfo).port}`
  const bad = runCli(t, ['check'], env(emptyIssuer))
  t.equal((await bad.exited).code, 1, 'check fails without the metadata')
  t.match(bad.stdout(), /FAIL {2}OAuth: PROXY_MCP_OAUTH_ISSUER: the authorization server's metadata could not be read \(.*answered 404.*answered 404\)/)

  const stopped = runCli(t, [], env(emptyIssuer))
  const exit = await stopped.exited
  t.not(exit.code, 0, 'the start stops')
  t.match(stopped.stderr() + stopped.stdout(), /PROXY_MCP_OAUTH_ISSUER: the authorization server's metadata could not be read/, 'naming the variable')

  const started = runCli(t, [], env(idp.issuer))
  await started.waitFor(/Server listening at http:\/\/127\.0\.0\.1:\d+/, 20_000)
  const port = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(started.stdout())?.[1]
  t.ok(port !== undefined, 'it listens')
  const res = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`)
  t.match(await res.json(), { resource: RESOURCE, authorization_servers: [idp.issuer] })
})
