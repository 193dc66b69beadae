import { mkdtempSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { request } from 'undici'
import { listeningPort, runCli, type Child } from '../helpers/child-proxy.js'
import { DEMO_CREDENTIALS, providerEnv, startProvider } from '../helpers/harness.js'
import { eventually } from '../helpers/eventually.js'

function secretsDir (apiKey: string): { dir: string, write: (name: string, value: string) => void } {
  const dir = mkdtempSync(join(tmpdir(), 'pap-rotation-'))
  // Written then renamed, as Kubernetes and most tools update secrets atomically.
  const write = (name: string, value: string): void => {
    writeFileSync(join(dir, `.${name}.tmp`), value)
    renameSync(join(dir, `.${name}.tmp`), join(dir, name))
  }
  write('api-key', `${apiKey}\n`)
  write('public-key', `${DEMO_CREDENTIALS.sandbox.publicKey}\n`)
  return { dir, write }
}

async function readyStatus (port: number): Promise<number> {
  const res = await request(`http://127.0.0.1:${port}/readyz`)
  await res.body.dump()
  return res.statusCode
}

function startWithFiles (t: Parameters<typeof runCli>[0], provider: Awaited<ReturnType<typeof startProvider>>, dir: string): Child {
  return runCli(t, [], providerEnv(provider, {
    PAYMENTS_PRODUCTION_API_KEY: undefined,
    PAYMENTS_PRODUCTION_PUBLIC_KEY: undefined,
    PAYMENTS_SANDBOX_API_KEY: undefined,
    PAYMENTS_SANDBOX_PUBLIC_KEY: undefined,
    PAYMENTS_SANDBOX_API_KEY_FILE: join(dir, 'api-key'),
    PAYMENTS_SANDBOX_PUBLIC_KEY_FILE: join(dir, 'public-key'),
    PROXY_TOKEN_RETRY_MAX_SECONDS: '1',
  }))
}

/** A proxy on the demo sandbox keys, read from files, holding its first token. */
async function startReadyWithDemoKeys (t: Parameters<typeof runCli>[0]): Promise<{ provider: Awaited<ReturnType<typeof startProvider>>, secrets: ReturnType<typeof secretsDir>, child: Child, port: number }> {
  const provider = await startProvider(t)
  const secrets = secretsDir(DEMO_CREDENTIALS.sandbox.apiKey)
  const child = startWithFiles(t, provider, secrets.dir)
  await child.waitFor(/ready to accept requests/)
  const port = listeningPort(child)
  await eventually(async () => await readyStatus(port) === 200, { what: 'initial readiness', timeoutMs: 10_000, everyMs: 25, detail: child.stdout })
  return { provider, secrets, child, port }
}

t.test('SIGHUP re-reads the secret files: a valid new key replaces the old one and its token', async (t) => {
  const provider = await startProvider(t)
  const secrets = secretsDir('HC_revoked_key_0000')
  const child = startWithFiles(t, provider, secrets.dir)
  await child.waitFor(/payments-auth-proxy listening; ready once every environment holds a token/)
  const port = listeningPort(child)
  await child.waitFor(/token refresh failed/)
  t.equal(await readyStatus(port), 503, 'not ready with a key the provider refuses')
  // Issue 35 item 13: listening is said, ready is not, while no token can be had.
  t.notMatch(child.stdout(), /ready to accept requests/, 'not announced ready without a token')

  secrets.write('api-key', `${DEMO_CREDENTIALS.sandbox.apiKey}\n`)
  child.process.kill('SIGHUP')
  await eventually(async () => await readyStatus(port) === 200, { what: 'readiness after rotation', timeoutMs: 10_000, everyMs: 25, detail: child.stdout })
  // stdout is a pipe, written asynchronously: wait for the lines rather than read them at once.
  await child.waitFor(/"trigger":"SIGHUP"/)
  await child.waitFor(/credentials rotated: the new keys obtained a token/)
  t.pass('the SIGHUP reload rotated the credentials')
  await child.waitFor(/ready to accept requests/)
  t.pass('announced ready once the token is held')
  const res = await request(`http://127.0.0.1:${port}/fiat/v1/x`)
  t.equal(res.statusCode, 200, 'requests flow with the new key')
  await res.body.dump()
  const used = provider.tokenRequests.map((r) => r.headers['api-key'])
  t.equal(used.at(-1), DEMO_CREDENTIALS.sandbox.apiKey, 'the last token request used the new key')
  t.notOk(child.stdout().includes(DEMO_CREDENTIALS.sandbox.apiKey), 'the key is never logged')
})

t.test('a rewritten secret file is picked up without a signal; an invalid set is refused and the old one keeps serving', async (t) => {
  const { provider, secrets, child, port } = await startReadyWithDemoKeys(t)

  secrets.write('api-key', '')
  await child.waitFor(/credential reload refused: keeping the current credentials/, 10_000)
  await child.waitFor(/"trigger":"secret file changed"/)
  await child.waitFor(/PAYMENTS_SANDBOX_API_KEY_FILE: .* is empty/)
  t.pass('the file change was noticed and the empty key named')
  t.equal(await readyStatus(port), 200, 'still ready with the old credentials')
  const res = await request(`http://127.0.0.1:${port}/fiat/v1/x`)
  t.equal(res.statusCode, 200, 'the old set keeps serving')
  await res.body.dump()
  t.equal(provider.tokenRequests.length, 1, 'no token request with the refused set')
})

async function readiness (port: number): Promise<{ status: number, body: { environments: Record<string, { ready: boolean, rotation?: { ok: boolean, problem?: string } }> } }> {
  const res = await request(`http://127.0.0.1:${port}/readyz`)
  return { status: res.statusCode, body: await res.body.json() as never }
}

t.test('rotation to keys the provider rejects keeps the working token: requests 200, /readyz 200 and showing the failure, an error logged', async (t) => {
  const { provider, secrets, child, port } = await startReadyWithDemoKeys(t)

  const rejected = 'HC_rejected_by_provider_0042'
  secrets.write('api-key', `${rejected}\n`)
  child.process.kill('SIGHUP')
  await child.waitFor(/credential rotation failed: the new keys did not obtain a token/)
  t.equal(provider.tokenRequests.at(-1)?.headers['api-key'], rejected, 'the new key was tried')
  const ready = await readiness(port)
  t.equal(ready.status, 200, '/readyz stays 200 while the old token is valid')
  t.equal(ready.body.environments['sandbox']?.rotation?.ok, false, '/readyz reports the failed rotation')
  for (let i = 0; i < 3; i++) {
    const res = await request(`http://127.0.0.1:${port}/fiat/v1/x`)
    t.equal(res.statusCode, 200, `request ${i + 1} still served with the old token`)
    await res.body.dump()
  }
  const metrics = await (await request(`http://127.0.0.1:${port}/metrics`)).body.text()
  t.match(metrics, /credential_rotations_total\{environment="sandbox",outcome="rejected"\} 1/, 'the rejected rotation is counted')
  t.notOk(child.stdout().includes(rejected) || child.stdout().includes(DEMO_CREDENTIALS.sandbox.apiKey), 'neither key is logged')
})

t.test('two key files rewritten a second apart rotate once, to the final pair', async (t) => {
  const { provider, secrets, child, port } = await startReadyWithDemoKeys(t)
  const before = provider.tokenRequests.length

  const next = { apiKey: 'HC_rotated_sandbox_key_0002', publicKey: 'pk_rotated_sandbox_0002' }
  provider.setCredentials('sandbox', next)
  secrets.write('api-key', `${next.apiKey}\n`)
  await new Promise((resolve) => setTimeout(resolve, 1000))
  secrets.write('public-key', `${next.publicKey}\n`)
  await child.waitFor(/credentials rotated: the new keys obtained a token/, 10_000)

  const during = provider.tokenRequests.slice(before)
  t.equal(during.length, 1, 'one token request for the rotation')
  t.equal(during[0]?.headers['api-key'], next.apiKey, 'with the new API key')
  t.match(during[0]?.body ?? '', next.publicKey, 'and the new public key')
  t.notMatch(child.stdout(), /credential rotation failed/, 'no attempt with a half-rotated pair')
  const res = await request(`http://127.0.0.1:${port}/fiat/v1/x`)
  t.equal(res.statusCode, 200, 'requests flow with the new token')
  await res.body.dump()
  t.equal((await readiness(port)).body.environments['sandbox']?.rotation?.ok, true, '/readyz reports the rotation')
})
