/**
 * The start with approveAbove in the callers file (SPEC §11): without PROXY_APPROVAL_SIGNING_SECRET
 * or with PROXY_IDEMPOTENCY=off it stops with one problem each; an approver limited by approveAbove
 * is a start warning.
 */
import t from 'tap'
import { join } from 'node:path'
import { ConfigError, loadConfig } from '../../src/config/load-config.js'
import { buildServer } from '../../src/server.js'
import { captureLogger, providerEnv, startProvider } from '../helpers/harness.js'
import { SIGNING_SECRET, approvalsCallersFile, tempDir } from './approvals-harness.js'

t.test('approveAbove stops the start without the signing secret and with idempotency off', async (t) => {
  const provider = await startProvider(t)
  const dir = tempDir(t)
  const { config } = loadConfig(providerEnv(provider, { PROXY_CALLERS_FILE: approvalsCallersFile(dir), PROXY_IDEMPOTENCY: 'off', PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db') }))
  const { logger } = captureLogger()
  const refused = await buildServer(config, { logger }).then(() => null, (err: unknown) => err)
  t.ok(refused instanceof ConfigError)
  t.match((refused as ConfigError).problems, [/^PROXY_APPROVAL_SIGNING_SECRET \(or PROXY_APPROVAL_SIGNING_SECRET_FILE\) is required/, /^PROXY_IDEMPOTENCY=off cannot be used with approveAbove/])
})

t.test('an approver limited by approveAbove is a start warning; the secret never appears in the logs', async (t) => {
  const provider = await startProvider(t)
  const dir = tempDir(t)
  const { config } = loadConfig(providerEnv(provider, { PROXY_CALLERS_FILE: approvalsCallersFile(dir), PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db') }))
  const { logger, logs } = captureLogger()
  const server = await buildServer(config, { logger })
  t.teardown(() => server.app.close())
  t.match(logs.find('configuration warning').map((r) => r['warning']), [/caller treasurer is an approver and is limited by approveAbove/])
  t.notOk(logs.lines.join('\n').includes(SIGNING_SECRET))
})

t.test('PROXY_APPROVAL_SIGNING_SECRET must be a whsec_ secret, and is never quoted', async (t) => {
  const provider = await startProvider(t)
  const thrown = ((): unknown => { try { return loadConfig(providerEnv(provider, { PROXY_APPROVAL_SIGNING_SECRET: 'not-a-secret-value' })) } catch (err) { return err } })()
  t.ok(thrown instanceof ConfigError)
  t.match((thrown as ConfigError).problems, [/^PROXY_APPROVAL_SIGNING_SECRET must be whsec_/])
  t.notOk((thrown as ConfigError).message.includes('not-a-secret-value'))
})
