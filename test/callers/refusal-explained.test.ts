/**
 * Issue 35 item 2: a caller refusal can be explained from its log line and its answer: method,
 * canonical bounded path, environment, interface, and which field no allow rule admitted (before,
 * "not permitted POST on this path" was said even when the environment was the reason).
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { request } from 'undici'
import { LOGGED_PATH_CHARS } from '../../src/routing/canonical-path.js'
import { keySha256 } from '../../src/callers/judge-caller.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'

const AGENT_KEY = 'pak_refusal-explained-key-0123456789abcdefghijklmn'

function callersFile (): string {
  const dir = mkdtempSync(join(tmpdir(), 'callers-'))
  const file = join(dir, 'callers.yaml')
  writeFileSync(file, `callers:
  - id: payout-agent
    keySha256: ${keySha256(AGENT_KEY)}
    allow:
      - environments: [sandbox]
        interfaces: [fiat]
        methods: [GET, POST]
        paths: ["/v1/payouts/**"]
`)
  return file
}

t.test('each refusal names what was asked and what did not match, in the log and the answer', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: callersFile() }))
  await waitReady(proxy)
  const long = `/v1/${'a'.repeat(400)}`
  const cases: Array<[string, string, string, Record<string, unknown>, RegExp]> = [
    ['another environment', 'POST', '/production/fiat/v1/payouts', { method: 'POST', path: '/v1/payouts', environment: 'production', interface: 'fiat', mismatch: 'environment' },
      /^Caller payout-agent is not permitted POST \/v1\/payouts on production fiat: none of its allow rules admits the production environment$/],
    ['another interface', 'GET', '/sandbox/crypto/v1/payouts', { environment: 'sandbox', interface: 'crypto', mismatch: 'interface' }, /admits the crypto interface$/],
    ['another method', 'DELETE', '/sandbox/fiat/v1/payouts/7', { method: 'DELETE', path: '/v1/payouts/7', mismatch: 'method' }, /admits the method DELETE there$/],
    ['another path, short route judged as its environment', 'GET', '/fiat/v1/Balances', { path: '/v1/Balances', environment: 'sandbox', mismatch: 'path' }, /not permitted GET \/v1\/Balances on sandbox fiat: none of its allow rules admits this path there$/],
  ]
  for (const [label, method, path, logged, message] of cases) {
    const res = await request(proxy.url + path, { method, headers: { authorization: `Bearer ${AGENT_KEY}` } })
    const body = await res.body.text()
    await assertProxyError(t, { statusCode: res.statusCode, headers: res.headers, body }, 403, 'CALLER_NOT_PERMITTED', label)
    t.match((JSON.parse(body) as { error: { message: string } }).error.message, message, `${label}: the answer says what did not match`)
    const line = proxy.logs.find('caller refused').at(-1)
    t.match(line, { level: 40, caller: 'payout-agent', code: 'CALLER_NOT_PERMITTED', ...logged }, `${label}: the log line says it too`)
  }
  const res = await request(proxy.url + `/sandbox/fiat${long}`, { headers: { authorization: `Bearer ${AGENT_KEY}` } })
  await res.body.dump()
  const path = proxy.logs.find('caller refused').at(-1)?.['path']
  t.equal(typeof path === 'string' ? path.length : 0, LOGGED_PATH_CHARS + 1, 'a long path is bounded in the log')
  t.notOk(proxy.logs.lines.some((l) => l.includes(AGENT_KEY)), 'no caller key in any log line')
})
