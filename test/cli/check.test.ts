import t from 'tap'
import { runCli } from '../helpers/child-proxy.js'
import { providerEnv, startProvider } from '../helpers/harness.js'

t.test('check: tokens and egress IP fetched, exit 0, no token printed', async (t) => {
  const provider = await startProvider(t)
  const child = runCli(t, ['check'], providerEnv(provider, { PROXY_EGRESS_IP_URL: provider.ipEchoUrl, PROXY_EXPECTED_EGRESS_IPS: '203.0.113.7' }))
  const { code } = await child.exited
  const out = child.stdout()
  t.equal(code, 0, out + child.stderr())
  t.match(out, /ok {4}production: token obtained, expiresAt \d+ \(20\d\d-.*\), lifetime \d+ s/)
  t.match(out, /ok {4}sandbox: token obtained/)
  t.match(out, /ok {4}egress IP: 203\.0\.113\.7 \(in PROXY_EXPECTED_EGRESS_IPS\)/)
  t.match(out, /all checks passed/)
  for (const token of provider.issuedTokens) t.notOk(out.includes(token), 'token never printed')
})

t.test('check at LOG_LEVEL=trace: the report on stdout stays plain text, log lines go to stderr', async (t) => {
  const provider = await startProvider(t)
  const child = runCli(t, ['check'], providerEnv(provider, { LOG_LEVEL: 'trace', PROXY_EGRESS_IP_URL: provider.ipEchoUrl }))
  t.equal((await child.exited).code, 0)
  const lines = child.stdout().trim().split('\n')
  t.ok(lines.every((line) => !line.startsWith('{')), `no JSON on stdout:\n${child.stdout()}`)
  t.match(lines.at(-1), /all checks passed/)
  t.match(child.stderr(), /^\{"level":30,.*"msg":"egress IP for allowlisting"/m, 'the log lines are on stderr')
  for (const token of provider.issuedTokens) t.notOk(child.stdout().includes(token) || child.stderr().includes(token), 'token never printed or logged')
})

t.test('check: a wrong API key gives a clear reason and a non-zero exit', async (t) => {
  const provider = await startProvider(t)
  const wrong = 'HC_wrong_key_2718'
  const child = runCli(t, ['check'], providerEnv(provider, { PAYMENTS_SANDBOX_API_KEY: wrong }))
  const { code } = await child.exited
  const out = child.stdout()
  t.equal(code, 1)
  t.match(out, /FAIL {2}sandbox: the token endpoint refused the credentials \(HTTP 401\): check PAYMENTS_SANDBOX_API_KEY and PAYMENTS_SANDBOX_PUBLIC_KEY/)
  t.match(out, /ok {4}production/)
  t.match(out, /some checks failed/)
  t.notOk((out + child.stderr()).includes(wrong), 'the key is not echoed')
})

t.test('check: an egress IP outside the expected ones fails', async (t) => {
  const provider = await startProvider(t)
  const child = runCli(t, ['check'], providerEnv(provider, { PROXY_EGRESS_IP_URL: provider.ipEchoUrl, PROXY_EXPECTED_EGRESS_IPS: '198.51.100.1' }))
  t.equal((await child.exited).code, 1)
  t.match(child.stdout(), /FAIL {2}egress IP: 203\.0\.113\.7 is not in PROXY_EXPECTED_EGRESS_IPS/)
})
