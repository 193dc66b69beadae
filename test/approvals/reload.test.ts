/**
 * A callers file reloaded into a sidecar that started without approvals may not add approveAbove:
 * its requests would be forwarded, not held. The reload is refused, the old callers kept.
 */
import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { providerEnv, startProvider, startProxy } from '../helpers/harness.js'
import { approvalsCallersFile, tempDir } from './approvals-harness.js'

t.test('reload: adding approveAbove to a sidecar started without approvals is refused until a restart', async (t) => {
  const provider = await startProvider(t)
  const file = approvalsCallersFile(tempDir(t))
  const withApprovals = readFileSync(file, 'utf8')
  writeFileSync(file, withApprovals.replaceAll(/^\s+approveAbove:.*\n/gm, ''))
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: file }))
  t.equal(proxy.callers?.reload('SIGHUP'), true, 'the same file without approveAbove reloads')
  writeFileSync(file, withApprovals)
  t.equal(proxy.callers?.reload('SIGHUP'), false, 'with approveAbove it is refused')
  const refusal = proxy.logs.find('callers file refused; the previous callers stay in force').at(-1)
  t.match(refusal?.['problems'], [/caller payout-agent: approveAbove needs a restart/, /caller treasurer: approveAbove needs a restart/])
})
