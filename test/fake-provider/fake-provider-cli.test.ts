/**
 * Issue 35 item 11: the fake provider run alone (`node dist/fake-provider/cli.js`) prints, in its
 * start line, the URLs to give the proxy and the demo credentials it accepts, and honours its
 * documented FAKE_PROVIDER_* port variables.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { DEMO_CREDENTIALS } from '../../src/fake-provider/index.js'

t.test('the start line names its URLs and the demo credentials', async (t) => {
  const child = spawn(process.execPath, [fileURLToPath(new URL('../../dist/fake-provider/cli.js', import.meta.url))], {
    env: { PATH: process.env['PATH'], FAKE_PROVIDER_FIAT_PORT: '0', FAKE_PROVIDER_CRYPTO_PORT: '0', FAKE_PROVIDER_IP_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const [chunk] = await once(child.stdout, 'data') as [Buffer]
  const line = JSON.parse(chunk.toString('utf8').split('\n')[0] ?? '') as Record<string, unknown>
  t.equal(line['msg'], 'fake provider listening')
  t.match(line['fiatBaseUrl'], /^http:\/\/127\.0\.0\.1:\d+\/api\/b2b$/)
  t.notMatch(line['fiatBaseUrl'], /:4010\//, 'FAKE_PROVIDER_FIAT_PORT=0 is honoured')
  t.same(line['credentials'], DEMO_CREDENTIALS, 'the demo credentials themselves')
  const token = await fetch(`${String(line['fiatBaseUrl'])}/auth/generate-bearer-token`, {
    method: 'POST',
    headers: { 'api-key': DEMO_CREDENTIALS.production.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ publicKey: DEMO_CREDENTIALS.production.publicKey }),
  })
  t.equal(token.status, 200, 'and they obtain a token')
  child.kill('SIGTERM')
  t.equal((await once(child, 'exit'))[0], 0, 'stops cleanly on SIGTERM')
})
