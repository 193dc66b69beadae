import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { request } from 'undici'
import { keySha256 } from '../../src/callers/judge-caller.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'

const AGENT_KEY = 'pak_agent-key-for-tests-0123456789abcdefghijklmnop'
const OTHER_KEY = 'pak_unknown-key-for-tests-0123456789abcdefghijkl'
const PINNED_KEY = 'pak_pinned-key-for-tests-0123456789abcdefghijklm'
const LOCAL_KEY = 'pak_local-key-for-tests-0123456789abcdefghijklmn'

function callersFile (): string {
  const dir = mkdtempSync(join(tmpdir(), 'callers-'))
  const file = join(dir, 'callers.yaml')
  writeFileSync(file, `callers:
  - id: payout-agent
    keySha256: ${keySha256(AGENT_KEY).toUpperCase()}
    allow:
      - environments: [sandbox]
        interfaces: [fiat]
        methods: [GET, POST]
        paths: ["/payouts/**", "/balances"]
    rateLimit: { requests: 2, perSeconds: 60 }
    requireExternalReference: true
  - id: local-service
    sources: [127.0.0.1]
    allow:
      - methods: [GET]
        paths: ["/status"]
  - id: pinned-agent
    keySha256: ${keySha256(PINNED_KEY)}
    sources: [10.99.0.0/16]
    allow: [{}]
  - id: local-agent
    keySha256: ${keySha256(LOCAL_KEY)}
    sources: [127.0.0.0/8]
    allow: [{}]
`)
  return file
}

t.test('callers file: every §7 refusal in the contract shape, none reaching the provider', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: callersFile() }))
  await waitReady(proxy)
  const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` })
  const cases: Array<[string, string, Record<string, string>, number, string | null]> = [
    ['key-less source caller, permitted path', '/sandbox/fiat/status', {}, 200, null],
    ['key-less source caller, other path', '/sandbox/fiat/balances', {}, 403, 'CALLER_NOT_PERMITTED'],
    ['unknown key from a source caller address is not downgraded', '/sandbox/fiat/status', bearer(OTHER_KEY), 401, 'CALLER_UNAUTHENTICATED'],
    ['agent on its prefix, with ** matching the bare prefix', '/sandbox/fiat/payouts', bearer(AGENT_KEY), 200, null],
    ['agent glob edge /balancesX', '/sandbox/fiat/balancesX', bearer(AGENT_KEY), 403, 'CALLER_NOT_PERMITTED'],
    ['agent production refused', '/production/fiat/balances', bearer(AGENT_KEY), 403, 'CALLER_NOT_PERMITTED'],
    ['short route judged as its environment (sandbox)', '/fiat/BALANCES/?x=1', bearer(AGENT_KEY), 200, null],
    ['an encoded .. never escapes a permitted prefix', '/sandbox/fiat/payouts/%2e%2e/status', bearer(AGENT_KEY), -1, null],
    ['an encoded / never escapes a permitted prefix', '/sandbox/fiat/payouts%2f..%2fstatus', bearer(AGENT_KEY), -1, null],
    ['a key in the query string is not a credential', `/sandbox/fiat/balances?access_token=${AGENT_KEY}`, {}, 403, 'CALLER_NOT_PERMITTED'],
    ['a key in a cookie is not a credential', '/sandbox/fiat/balances', { cookie: `caller_key=${AGENT_KEY}; token=${AGENT_KEY}` }, 403, 'CALLER_NOT_PERMITTED'],
    ['a keyed caller with sources, from inside them', '/sandbox/fiat/balances', bearer(LOCAL_KEY), 200, null],
    ['a keyed caller with sources, from elsewhere', '/sandbox/fiat/balances', bearer(PINNED_KEY), 401, 'CALLER_UNAUTHENTICATED'],
    ['agent over its rate limit', '/sandbox/fiat/balances', bearer(AGENT_KEY), 429, 'CALLER_RATE_LIMITED'],
  ]
  for (const [name, path, headers, status, code] of cases) {
    const before = provider.upstreamRequests.length
    const res = await request(proxy.url + path, { headers })
    if (status === -1) {
      await res.body.text()
      t.not(res.statusCode, 200, name)
      t.equal(provider.upstreamRequests.length, before, `${name}: upstream not contacted`)
      continue
    }
    if (code === null) {
      await res.body.text()
      t.equal(res.statusCode, status, name)
      continue
    }
    await assertProxyError(t, res, status, code, name)
    t.equal(provider.upstreamRequests.length, before, `${name}: upstream not contacted`)
    if (status === 401) t.match(res.headers['www-authenticate'], /^Bearer realm=/, `${name}: WWW-Authenticate`)
  }
  t.notOk(provider.upstreamRequests.some((r) => JSON.stringify(r).includes(AGENT_KEY)), 'the caller key never reached the provider')
  t.notOk(proxy.logs.lines.some((l) => l.includes(AGENT_KEY) || l.includes(OTHER_KEY)), 'no caller key in any log line')
  const access = proxy.logs.find('proxied request')
  t.ok(access.some((r) => r.caller === 'payout-agent') && access.some((r) => r.caller === 'local-service'), 'the access line names the caller')
  t.ok(proxy.logs.records.some((r) => r.msg === 'caller refused' && r.caller === 'payout-agent' && r.code === 'CALLER_RATE_LIMITED'), 'refusals logged with caller and code')
  // SPEC §7 audit: metrics are labelled by caller (counts from the table above).
  const metrics = await (await request(`${proxy.url}/metrics`)).body.text()
  const count = (pattern: RegExp): number => Number(pattern.exec(metrics)?.[1] ?? 0)
  t.equal(count(/^payments_auth_proxy_caller_refusals_total\{caller="payout-agent",code="CALLER_RATE_LIMITED"\} (\d+)$/m), 1, 'refusals by caller and code')
  t.equal(count(/^payments_auth_proxy_caller_refusals_total\{caller="local-service",code="CALLER_NOT_PERMITTED"\} (\d+)$/m), 3, 'the key-less caller has its own count (other path, key in the query, key in a cookie)')
  t.equal(count(/^payments_auth_proxy_caller_refusals_total\{caller="anonymous",code="CALLER_UNAUTHENTICATED"\} (\d+)$/m), 2, 'failed identities count as anonymous')
  t.equal(count(/^payments_auth_proxy_requests_total\{environment="sandbox",interface="fiat",status_class="2xx",caller="payout-agent",code=""\} (\d+)$/m), 2, 'proxied requests by caller')
  t.equal(count(/^payments_auth_proxy_requests_total\{environment="sandbox",interface="fiat",status_class="2xx",caller="local-agent",code=""\} (\d+)$/m), 1)
})

t.test('requireExternalReference refuses a POST without a reference', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: callersFile(), PROXY_IDEMPOTENCY: 'off' }))
  await waitReady(proxy)
  const res = await request(`${proxy.url}/sandbox/fiat/payouts`, {
    method: 'POST', headers: { authorization: `Bearer ${AGENT_KEY}`, 'content-type': 'application/json' }, body: '{"amount":"10"}',
  })
  await assertProxyError(t, res, 400, 'EXTERNAL_REFERENCE_REQUIRED')
  t.equal(provider.upstreamRequests.length, 0, 'upstream not contacted')
})

t.test('two Authorization headers are refused, never "the first wins"', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: callersFile() }))
  await waitReady(proxy)
  const res = await request(`${proxy.url}/sandbox/fiat/balances`, { headers: ['authorization', `Bearer ${AGENT_KEY}`, 'authorization', 'Bearer x'] })
  await assertProxyError(t, res, 401, 'CALLER_UNAUTHENTICATED')
  t.equal(provider.upstreamRequests.length, 0, 'nothing forwarded')
  const refusals = proxy.logs.find('caller refused')
  t.same(refusals.map((r) => [r['level'], r['caller'], r['code']]), [[40, 'anonymous', 'CALLER_UNAUTHENTICATED']], 'one warn line with the caller and the code')
})

t.test('Retry-After of the rate limit is the time until the next request is admitted', async (t) => {
  const clock = new FakeClock()
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: callersFile() }), { clock })
  await waitReady(proxy)
  const balances = async (): Promise<{ status: number, retryAfter: string | string[] | undefined }> => {
    const res = await request(`${proxy.url}/sandbox/fiat/balances`, { headers: { authorization: `Bearer ${AGENT_KEY}` } })
    await res.body.text()
    return { status: res.statusCode, retryAfter: res.headers['retry-after'] }
  }
  t.equal((await balances()).status, 200, 'first of 2 a minute')
  await clock.advance(10_000)
  t.equal((await balances()).status, 200, 'second of 2 a minute, 10 s later')
  t.same(await balances(), { status: 429, retryAfter: '50' }, 'the first leaves the window in 50 s')
  await clock.advance(20_500)
  t.same(await balances(), { status: 429, retryAfter: '30' }, '29.5 s to go, in whole seconds rounded up')
  await clock.advance(29_400)
  t.same(await balances(), { status: 429, retryAfter: '1' }, '0.1 s to go is 1 s, never 0')
  await clock.advance(100)
  t.equal((await balances()).status, 200, 'admitted when the first has left the window')
  t.same(await balances(), { status: 429, retryAfter: '10' }, 'the next admission follows the second request, 10 s on')
})
