/**
 * The start with approveAbove in the callers file (SPEC §11): without PROXY_APPROVAL_SIGNING_SECRET,
 * without PROXY_APPROVAL_SEALING_SECRET or with PROXY_IDEMPOTENCY=off it stops with one problem
 * each; either secret equal to another secret of the configuration, in any spelling, stops it too;
 * an approver limited by approveAbove is a start warning.
 */
import t from 'tap'
import { join } from 'node:path'
import { ConfigError } from '../../src/config/config-error.js'
import { loadConfig } from '../../src/load-config.js'
import { buildServer } from '../../src/server.js'
import { captureLogger, providerEnv, startProvider } from '../helpers/harness.js'
import { SEALING_SECRET, SIGNING_SECRET, approvalsCallersFile, tempDir } from './approvals-harness.js'

t.test('approveAbove stops the start without the signing and sealing secrets and with idempotency off', async (t) => {
  const provider = await startProvider(t)
  const dir = tempDir(t)
  const { config } = loadConfig(providerEnv(provider, { PROXY_CALLERS_FILE: approvalsCallersFile(dir), PROXY_IDEMPOTENCY: 'off', PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db') }))
  const { logger } = captureLogger()
  const refused = await buildServer(config, { logger }).then(() => null, (err: unknown) => err)
  t.ok(refused instanceof ConfigError)
  t.match((refused as ConfigError).problems, [
    /^PROXY_APPROVAL_SIGNING_SECRET \(or PROXY_APPROVAL_SIGNING_SECRET_FILE\) is required/,
    /^PROXY_APPROVAL_SEALING_SECRET \(or PROXY_APPROVAL_SEALING_SECRET_FILE\) is required/,
    /^PROXY_IDEMPOTENCY=off cannot be used with approveAbove/,
  ])
})

t.test('an approver limited by approveAbove is a start warning; the secret never appears in the logs', async (t) => {
  const provider = await startProvider(t)
  const dir = tempDir(t)
  const { config } = loadConfig(providerEnv(provider, { PROXY_CALLERS_FILE: approvalsCallersFile(dir), PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET, PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db') }))
  const { logger, logs } = captureLogger()
  const server = await buildServer(config, { logger })
  t.teardown(() => server.app.close())
  t.match(logs.find('configuration warning').map((r) => r['warning']), [/caller treasurer is an approver and is limited by approveAbove/])
  t.notOk(logs.lines.join('\n').includes(SIGNING_SECRET))
  t.notOk(logs.lines.join('\n').includes(SEALING_SECRET))
})

t.test('PROXY_APPROVAL_SIGNING_SECRET must be a whsec_ secret, and is never quoted', async (t) => {
  const provider = await startProvider(t)
  const thrown = ((): unknown => { try { return loadConfig(providerEnv(provider, { PROXY_APPROVAL_SIGNING_SECRET: 'not-a-secret-value' })) } catch (err) { return err } })()
  t.ok(thrown instanceof ConfigError)
  t.match((thrown as ConfigError).problems, [/^PROXY_APPROVAL_SIGNING_SECRET must be whsec_/])
  t.notOk((thrown as ConfigError).message.includes('not-a-secret-value'))
})

/** The spellings of one whsec_ key: without the prefix, without padding, the other alphabet, other spare bits. */
function spellings (secret: string): string[] {
  const base64 = secret.slice('whsec_'.length)
  const unpadded = base64.replace(/=+$/, '')
  const last = unpadded.at(-1) ?? 'A'
  // 32 bytes take 43 characters: the last carries 2 spare bits, which decoding ignores.
  const spare = String.fromCharCode(last.charCodeAt(0) + 1)
  return [secret, `whsec_${unpadded}`, `whsec_${base64.replaceAll('+', '-').replaceAll('/', '_')}`, `whsec_${unpadded.slice(0, -1)}${spare}`]
}

t.test('an approvals secret that is another secret of the configuration, in any spelling, stops the start and check, never quoted', async (t) => {
  const provider = await startProvider(t)
  const dir = tempDir(t)
  const inbox = { PROXY_WEBHOOK_LISTEN: '127.0.0.1:0', PROXY_WEBHOOK_DELIVER_TO: 'http://127.0.0.1:3000/events', PROXY_WEBHOOK_PATH_TOKEN: 'wht_0123456789abcdefghijklmn' }
  const base = providerEnv(provider, { PROXY_CALLERS_FILE: approvalsCallersFile(dir), PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db'), ...inbox })
  // The key with spare bits: a secret whose last character has room for the other spellings.
  const shared = `whsec_${Buffer.alloc(32, 0x41).toString('base64')}`
  const cases: Array<[string, Record<string, string>, RegExp]> = []
  for (const spelling of spellings(shared)) {
    cases.push([`the inbox's signing secret as the approvals' signing secret (${spelling === shared ? 'as is' : 'respelled'})`, { PROXY_WEBHOOK_SIGNING_SECRET: shared, PROXY_APPROVAL_SIGNING_SECRET: spelling, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET }, /^PROXY_APPROVAL_SIGNING_SECRET is the same key as PROXY_WEBHOOK_SIGNING_SECRET/])
    cases.push([`the inbox's signing secret as the sealing secret (${spelling === shared ? 'as is' : 'respelled'})`, { PROXY_WEBHOOK_SIGNING_SECRET: shared, PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: spelling }, /^PROXY_APPROVAL_SEALING_SECRET is the same key as PROXY_WEBHOOK_SIGNING_SECRET/])
  }
  cases.push(['the approvals\' signing secret as the sealing secret', { PROXY_WEBHOOK_SIGNING_SECRET: shared, PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: spellings(SIGNING_SECRET)[1] ?? '' }, /^PROXY_APPROVAL_SIGNING_SECRET is the same key as PROXY_APPROVAL_SEALING_SECRET/])
  cases.push(['the previous inbox signing secret', { PROXY_WEBHOOK_SIGNING_SECRET: SIGNING_SECRET.replace('Bw', 'Cw'), PROXY_WEBHOOK_SIGNING_SECRET_PREVIOUS: shared, PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: shared }, /^PROXY_APPROVAL_SEALING_SECRET is the same key as PROXY_WEBHOOK_SIGNING_SECRET_PREVIOUS/])
  cases.push(['the provider\'s verification secret (its text)', { PROXY_WEBHOOK_SIGNING_SECRET: shared, PROXY_WEBHOOK_VERIFY_SECRET: SEALING_SECRET, PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET }, /^PROXY_APPROVAL_SEALING_SECRET is the same key as PROXY_WEBHOOK_VERIFY_SECRET/])
  for (const [name, env, problem] of cases) {
    const thrown = ((): unknown => { try { return loadConfig({ ...base, ...env }) } catch (err) { return err } })()
    t.ok(thrown instanceof ConfigError, name)
    const problems = (thrown as ConfigError).problems
    t.ok(problems.some((p) => problem.test(p)), `${name}: ${problems.join('; ')}`)
    for (const value of Object.values(env)) t.notOk(problems.join('\n').includes(value), `${name}: no value quoted`)
  }
  t.doesNotThrow(() => loadConfig({ ...base, PROXY_WEBHOOK_SIGNING_SECRET: shared, PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET }), 'three keys of their own are accepted')
})
