/**
 * Issue 35 item 1: at SIGHUP the configuration the process would load now is compared with the one
 * it runs; what cannot be applied live is logged at error and shown in /readyz as restartRequired
 * (before, adding PROXY_CALLERS_FILE and sending SIGHUP said "nothing changed" and left the proxy open).
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { request } from 'undici'
import { loadConfig, type Env } from '../../src/load-config.js'
import { changesNeedingRestart } from '../../src/ops/restart-required.js'
import { listeningPort, runCli } from '../helpers/child-proxy.js'
import { eventually } from '../helpers/eventually.js'
import { providerEnv, startProvider } from '../helpers/harness.js'

const base: Env = {
  PAYMENTS_FIAT_BASE_URL: 'https://fiat.example.com/api/b2b',
  PAYMENTS_SANDBOX_API_KEY: 'HC_marker_api_key_Zq84',
  PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_marker_public_Zq84',
}

t.test('which changed variables need a restart', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pap-restart-'))
  const urlFile = join(dir, 'redis-url')
  writeFileSync(urlFile, 'redis://redis-a:6379/0')
  const running = loadConfig({ ...base, PROXY_REDIS_URL_FILE: urlFile })
  const cases: Array<[string, Env, string[]]> = [
    ['nothing changed', {}, []],
    ['new credentials of an enabled environment: rotated live', { PAYMENTS_SANDBOX_API_KEY: 'HC_other_key_Zq84' }, []],
    ['a callers file added', { PROXY_CALLERS_FILE: '/etc/callers.yaml' }, ['PROXY_CALLERS_FILE']],
    ['settings read at start', { PROXY_PORT: '9090', LOG_LEVEL: 'debug', PROXY_ALLOWED_CLIENTS: '10.0.0.0/8' }, ['LOG_LEVEL', 'PROXY_ALLOWED_CLIENTS', 'PROXY_PORT']],
    ['an environment enabled', { PAYMENTS_PRODUCTION_API_KEY: 'HC_prod_Zq84', PAYMENTS_PRODUCTION_PUBLIC_KEY: 'pk_prod_Zq84' }, ['PAYMENTS_PRODUCTION_API_KEY', 'PAYMENTS_PRODUCTION_PUBLIC_KEY']],
  ]
  for (const [label, change, expected] of cases) {
    t.same(changesNeedingRestart(running, loadConfig({ ...base, PROXY_REDIS_URL_FILE: urlFile, ...change })), expected, label)
  }
  writeFileSync(urlFile, 'redis://redis-b:6379/0')
  t.same(changesNeedingRestart(running, loadConfig({ ...base, PROXY_REDIS_URL_FILE: urlFile })), ['PROXY_REDIS_URL_FILE'], 'the same file with another URL in it')
})

async function readyz (port: number): Promise<Record<string, unknown>> {
  const res = await request(`http://127.0.0.1:${port}/readyz`)
  return await res.body.json() as Record<string, unknown>
}

t.test('SIGHUP after adding PROXY_CALLERS_FILE to .env: an error line names it and /readyz shows restartRequired until it is undone', async (t) => {
  const provider = await startProvider(t)
  const dir = mkdtempSync(join(tmpdir(), 'pap-restart-cli-'))
  writeFileSync(join(dir, '.env'), 'LOG_LEVEL=info\n')
  const child = runCli(t, [], providerEnv(provider), dir)
  await child.waitFor(/Server listening at/)
  const port = listeningPort(child)
  await eventually(async () => (await readyz(port))['ready'] === true, { what: 'ready' })
  t.notOk('restartRequired' in await readyz(port), 'nothing to restart for at start')

  writeFileSync(join(dir, 'callers.yaml'), 'callers: []\n')
  writeFileSync(join(dir, '.env'), `LOG_LEVEL=info\nPROXY_CALLERS_FILE=${join(dir, 'callers.yaml')}\n`)
  child.process.kill('SIGHUP')
  await child.waitFor(/"level":50[^\n]*"variable":"PROXY_CALLERS_FILE"[^\n]*restart the proxy to apply it/)
  await eventually(async () => JSON.stringify((await readyz(port))['restartRequired']) === '["PROXY_CALLERS_FILE"]', { what: 'restartRequired in /readyz' })
  t.equal((await readyz(port))['ready'], true, 'still ready: the proxy keeps serving as configured at start')

  writeFileSync(join(dir, '.env'), 'LOG_LEVEL=info\n')
  child.process.kill('SIGHUP')
  await eventually(async () => !('restartRequired' in await readyz(port)), { what: 'restartRequired cleared once the change is undone' })
  t.notMatch(child.stdout(), provider.issuedTokens[0] ?? '-', 'no token in the log')
})
