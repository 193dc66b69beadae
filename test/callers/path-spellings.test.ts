/**
 * Issue 34's attack, replayed over real sockets: every path spelling a lenient provider reads as the
 * plain one is refused with 400 PATH_NOT_CANONICAL before any upstream contact, with and without a
 * callers file, with the memory store and with Redis; one reference under any admitted spelling of
 * one path is one transaction, in turn and at once.
 */
import fc from 'fast-check'
import { setTimeout as sleep } from 'node:timers/promises'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { keySha256 } from '../../src/callers/judge-caller.js'
import type { FakeProvider } from '../../src/fake-provider/index.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { providerEnv, startProvider, startProxy, waitReady, type RunningProxy } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'
import { payoutAgentCallersFile } from './payout-agent.js'
import { eventually } from '../helpers/eventually.js'

const KEY = 'pak_spelling-agent-key-0123456789abcdefghijklmnopqrs'

/** The attack report's set-up: everything allowed, a limit on payouts only. */
function callersFile (): string {
  const file = join(mkdtempSync(join(tmpdir(), 'spelling-agent-')), 'callers.yaml')
  writeFileSync(file, `callers:
  - id: spelling-agent
    keySha256: ${keySha256(KEY)}
    allow: [{ paths: ["/**"] }]
    amountLimits:
      - paths: ["/v1/payouts/**"]
        amount: /amount
        currency: /currency
        perRequest: { KES: 100 }
        perDay: { KES: 500 }
`)
  return file
}

interface Rig { provider: FakeProvider, proxy: RunningProxy, callers: boolean }

async function rig (t: Test, options: { callers: boolean, redis: boolean }): Promise<Rig> {
  const provider = await startProvider(t)
  const env: Record<string, string> = { PROXY_DEFAULT_ENVIRONMENT: 'sandbox' }
  if (options.callers) env['PROXY_CALLERS_FILE'] = callersFile()
  if (options.redis) env['PROXY_REDIS_URL'] = (await startRedis(t)).url
  const proxy = await startProxy(t, providerEnv(provider, env))
  await waitReady(proxy)
  // Redis connects on its own time: the transactions below need it.
  await eventually(() => proxy.store.status().ready, { what: 'the state store connected' })
  return { provider, proxy, callers: options.callers }
}

interface Answer { status: number, headers: Headers, body: string }

async function post (setup: Rig, path: string, body: string): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (setup.callers) headers['authorization'] = `Bearer ${KEY}`
  const res = await fetch(`${setup.proxy.url}${path}`, { method: 'POST', headers, body })
  return { status: res.status, headers: res.headers, body: await res.text() }
}

let reference = 0
const payout = (amount: number, ref = `sp-${++reference}`): string => JSON.stringify({ externalReference: ref, amount, currency: 'KES' })

/** The spellings of `payouts` (fetch would tidy `#`, so raw clients cover that elsewhere). */
const PAYOUT_SPELLINGS = [
  '/fiat/v1/payouts;x=1', '/fiat/v1;x/payouts', '/fiat/v1/payouts;', '/fiat/v1/payouts%3b', '/fiat/v1/payouts.',
  '/fiat/v1/payouts%2e', '/fiat/v1/payouts.json', '/fiat/v1/payouts%20', '/fiat/v1/payouts%C2%A0', '/fiat/v1/payouts~',
  '/fiat/v1/payouts:', '/fiat/v1/payouts@', '/fiat/v1/payouts!', '/fiat/v1/payouts$', '/fiat/v1/payout%C5%BF',
  '/sandbox/fiat/v1/payouts;x=1',
]

const SETUPS = [
  { callers: true, redis: false }, { callers: true, redis: true }, { callers: false, redis: false }, { callers: false, redis: true },
]

for (const options of SETUPS) {
  const name = `${options.callers ? 'with' : 'without'} a callers file, ${options.redis ? 'Redis' : 'the memory store'}`

  t.test(`${name}: every spelling of the report is 400 PATH_NOT_CANONICAL, never forwarded, logged at warn with its segment`, async (t) => {
    const setup = await rig(t, options)
    for (const path of PAYOUT_SPELLINGS) {
      await assertProxyError(t, await post(setup, path, payout(999_999)), 400, 'PATH_NOT_CANONICAL', path)
    }
    t.same(setup.provider.upstreamRequests, [], 'nothing reached the provider')
    const warned = setup.proxy.logs.records.filter((r) => r.msg === 'path not canonical: refused')
    t.equal(warned.length, PAYOUT_SPELLINGS.length, 'one warn line each')
    t.ok(warned.every((r) => r['level'] === 40 && typeof r['segment'] === 'number' && r['caller'] === (options.callers ? 'spelling-agent' : null)), 'at warn, with the segment and the caller')
    t.notOk(setup.proxy.logs.lines.some((line) => line.includes('payouts;x=1') || line.includes('%C2%A0')), 'the raw path is not logged')
    t.equal((await post(setup, '/fiat/v1/payouts', payout(50))).status, 200, 'the plain spelling is still served')
  })

  t.test(`${name}: one reference under any spelling of one path is one transaction, in turn and at once`, async (t) => {
    const setup = await rig(t, options)
    const body = payout(10, 'sp-one-in-turn')
    const first = await post(setup, '/fiat/v1/payouts', body)
    t.equal(first.status, 200, 'the first is forwarded')
    for (const spelling of ['/fiat/v1/payouts/', '/fiat/V1/Payouts', '/fiat/v1/pay%6Futs', '/sandbox/fiat/V1/PAYOUTS/']) {
      const again = await post(setup, spelling, body)
      t.equal(again.status, 200, `${spelling}: answered`)
      t.equal(again.headers.get('idempotent-replayed'), 'true', `${spelling}: replayed, not forwarded`)
    }
    t.equal(setup.provider.upstreamRequests.length, 1, 'forwarded once in turn')

    setup.provider.upstreamRequests.length = 0
    setup.provider.setUpstreamHandler(async () => { await sleep(300); return false })
    const atOnce = payout(10, 'sp-one-at-once')
    const spellings = ['/fiat/v1/payouts', '/fiat/v1/payouts/', '/fiat/V1/Payouts', '/fiat/v1/PAYOUTS', '/fiat/%76%31/payouts', '/sandbox/fiat/v1/Payouts/']
    const answers = await Promise.all(spellings.map((spelling) => post(setup, spelling, atOnce)))
    t.equal(setup.provider.upstreamRequests.length, 1, 'forwarded once at once')
    t.ok(answers.every((a) => a.status === 200 || a.headers.get('x-proxy-error') === 'IDEMPOTENCY_IN_PROGRESS'), 'the others are 409 in progress or replayed')
  })
}

t.test('ten payouts to a non-canonical spelling spend nothing; the day limit still holds for the plain one', async (t) => {
  const setup = await rig(t, { callers: true, redis: false })
  for (let i = 0; i < 10; i++) t.equal((await post(setup, '/fiat/v1/payouts;x', payout(100))).status, 400)
  for (let i = 0; i < 5; i++) t.equal((await post(setup, '/fiat/v1/payouts', payout(100))).status, 200, `payout ${i + 1} of 5`)
  await assertProxyError(t, await post(setup, '/fiat/v1/payouts', payout(100)), 403, 'AMOUNT_LIMIT_EXCEEDED', 'the sixth')
  t.equal(setup.provider.upstreamRequests.length, 5)
})

t.test('with callers, identity comes first: a wrong key on a non-canonical path is 401', async (t) => {
  const setup = await rig(t, { callers: true, redis: false })
  const res = await fetch(`${setup.proxy.url}/fiat/v1/payouts;x`, { method: 'POST', headers: { authorization: 'Bearer pak_wrong', 'content-type': 'application/json' }, body: payout(1) })
  await assertProxyError(t, { status: res.status, headers: res.headers, body: await res.text() }, 401, 'CALLER_UNAUTHENTICATED', 'wrong key')
})

t.test('with callers, a non-canonical path is refused as such before allow judges it', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: payoutAgentCallersFile('narrow-agent', KEY) }))
  await waitReady(proxy)
  // The agent may only POST to /payouts/**: a path outside it, spelled plainly, is 403 ...
  const plain = await fetch(`${proxy.url}/sandbox/fiat/v1/balances`, { headers: { authorization: `Bearer ${KEY}` } })
  await assertProxyError(t, { status: plain.status, headers: plain.headers, body: await plain.text() }, 403, 'CALLER_NOT_PERMITTED', 'plain and not allowed')
  // ... and spelled oddly it is 400: the path is refused before any rule reads it.
  const odd = await fetch(`${proxy.url}/sandbox/fiat/v1/balances;x`, { headers: { authorization: `Bearer ${KEY}` } })
  await assertProxyError(t, { status: odd.status, headers: odd.headers, body: await odd.text() }, 400, 'PATH_NOT_CANONICAL', 'odd and not allowed')
  t.same(provider.upstreamRequests, [], 'nothing forwarded')
})

t.test('the production token never goes to a sandbox path, in any spelling, and no refresh is forced', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider))
  await waitReady(proxy)
  const tokensAtStart = provider.tokenRequests.length
  for (const spelling of ['sandbox;x', 'sandbox;', 'sandbox%3B', 'sandbox.', 'sandbox.json', 'sandbox%20', 'sandbox%C2%A0', 'sandbox:']) {
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${proxy.url}/production/crypto/${spelling}/x`)
      await assertProxyError(t, { status: res.status, headers: res.headers, body: await res.text() }, 400, 'PATH_NOT_CANONICAL', spelling)
    }
  }
  const plain = await fetch(`${proxy.url}/production/crypto/sandbox/x`)
  await assertProxyError(t, { status: plain.status, headers: plain.headers, body: await plain.text() }, 404, 'ROUTE_NOT_FOUND', 'the plain spelling')
  t.same(provider.upstreamRequests, [], 'nothing forwarded')
  t.equal(provider.tokenRequests.length, tokensAtStart, 'no token refresh forced')
})

/**
 * How the most lenient provider we know of reads an upstream path (see canonical-path.test.ts):
 * `payouts;x`, `payouts.json`, `payouts.`, `payouts%20`, `PAYOUTS` are all `payouts` to it.
 */
function lenientlyPayouts (upstreamPath: string): boolean {
  let text = upstreamPath
  for (let i = 0; i < 4; i++) {
    try { text = decodeURIComponent(text) } catch { break }
  }
  const segments = text.normalize('NFKC').split('/').map((s) => s.replace(/[;.].*$/, '').replace(/[\s~:@!$'()*+,=]+$/u, '').toUpperCase().toLowerCase())
  return segments.join('/').replace(/\/+$/, '').endsWith('/v1/payouts')
}

t.test('property: a payout over the limit, in any generated spelling, is refused or reaches something that is not payouts', async (t) => {
  const setup = await rig(t, { callers: true, redis: false })
  const piece = fc.constantFrom('payouts', 'PAYOUTS', 'Payouts', 'pay%6Futs', 'payout%73', ';', ';x=1', '.', '.json', '%2e', '%20', '%C2%A0',
    '~', ':', '@', '!', '$', '%3b', '%3B', '%41', '_', '-', 'x', '%C5%BF', '%E2%84%AA', '/', '')
  const spelling = fc.tuple(fc.constantFrom('v1', 'V1', '%76%31', 'v1;x', 'v1.'), fc.array(piece, { minLength: 1, maxLength: 4 }), fc.boolean())
    .map(([version, parts, slash]) => `/fiat/${version}/${parts.join('')}${slash ? '/' : ''}`)
  let forwarded = 0
  let refused = 0
  await fc.assert(fc.asyncProperty(spelling, async (path) => {
    setup.provider.upstreamRequests.length = 0
    const answer = await post(setup, path, payout(999_999))
    const upstream = setup.provider.upstreamRequests.map((r) => r.url)
    if (answer.headers.get('x-proxy-error') !== null) {
      refused++
      return upstream.length === 0
    }
    forwarded++
    return upstream.length === 1 && !lenientlyPayouts(upstream[0] ?? '')
  }), { numRuns: 300, seed: 3434 })
  t.ok(refused > 50, `refused spellings (${refused})`)
  t.ok(forwarded > 10, `forwarded spellings that are not payouts, so the property was tested both ways (${forwarded})`)
})
