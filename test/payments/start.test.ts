/**
 * SPEC §12 at the start, on the built CLI: PROXY_PAYMENTS=on without a notification URL or the
 * signing secret, or with §8 off, stops the start naming each; nothing is started.
 */
import t from 'tap'
import { runCli } from '../helpers/child-proxy.js'
import { providerEnv, startProvider } from '../helpers/harness.js'

t.test('the start names whichever of the URL and the secret is missing, and §8 when it is off', async (t) => {
  const provider = await startProvider(t)
  const child = runCli(t, [], providerEnv(provider, { PROXY_PAYMENTS: 'on', PROXY_IDEMPOTENCY: 'off' }))
  const { code } = await child.exited
  t.equal(code, 1)
  t.match(child.stderr(), /invalid configuration \(nothing was started\)/)
  t.match(child.stderr(), / {2}- PROXY_PAYMENTS=on needs PROXY_IDEMPOTENCY=on/)
  t.match(child.stderr(), / {2}- PROXY_PAYMENTS_NOTIFY_URL \(or PROXY_WEBHOOK_DELIVER_TO\) is required with PROXY_PAYMENTS=on/)
  t.match(child.stderr(), / {2}- PROXY_WEBHOOK_SIGNING_SECRET \(or _FILE\) is required with PROXY_PAYMENTS=on/)
  t.match(child.stderr(), / {2}- PROXY_PAYMENTS=on needs PROXY_SEALING_SECRET \(or PROXY_APPROVAL_SEALING_SECRET, or either with _FILE\): it seals every payment record/)
  t.equal(child.stdout(), '', 'nothing started, nothing logged')
  t.same(provider.tokenRequests, [], 'no token asked for')
})
