import type { IncomingHttpHeaders } from 'node:http'
import t from 'tap'
import { request } from 'undici'
import { payoutAgentCallersFile } from './payout-agent.js'
import { deferred } from '../helpers/deferred.js'
import { eventually } from '../helpers/eventually.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'

const KEY = 'pak_amount-agent-key-0123456789abcdefghijklmnopqrstuv'

const callersFile = (): string => payoutAgentCallersFile('payout-agent', KEY)

async function payout (url: string, amount: string, currency = 'KES', ref = `r-${Math.random()}`): Promise<{ status: number, headers: IncomingHttpHeaders, body: string }> {
  const res = await request(`${url}/sandbox/fiat/payouts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'text/plain' },
    body: `{"amount":${amount},"currency":"${currency}","externalReference":"${ref}"}`,
  })
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() }
}

t.test('day totals: exact decimals, given back on 4xx, reset at UTC midnight, whatever the Content-Type', async (t) => {
  const clock = new FakeClock(Date.UTC(2026, 10, 22, 23, 59, 0))
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: callersFile() }), { clock })
  await waitReady(proxy)
  t.equal((await payout(proxy.url, '"0.1"', 'USD')).status, 200)
  t.equal((await payout(proxy.url, '"0.2"', 'USD')).status, 200, '"0.1" + "0.2" is exactly "0.3", within the limit')
  await assertProxyError(t, await payout(proxy.url, '"0.00000001"', 'USD'), 403, 'AMOUNT_LIMIT_EXCEEDED', 'and nothing more fits')
  await assertProxyError(t, await payout(proxy.url, '"0.000000001"', 'USD'), 403, 'AMOUNT_LIMIT_EXCEEDED', 'not even a ninth decimal: it rounds up to 1e-8')
  const forwarded = provider.upstreamRequests.length
  await assertProxyError(t, await payout(proxy.url, '101'), 403, 'AMOUNT_LIMIT_EXCEEDED', 'over the per-request limit')
  await assertProxyError(t, await payout(proxy.url, '"1e2"'), 400, 'AMOUNT_UNREADABLE', 'an exponent is not a plain decimal')
  t.equal(provider.upstreamRequests.length, forwarded, 'refusals reach no upstream')

  provider.setUpstreamHandler(async (_req, res) => { res.writeHead(422, { 'content-type': 'application/json' }).end('{"success":false}'); return true })
  t.equal((await payout(proxy.url, '100')).status, 422, 'the provider refused the payout')
  provider.setUpstreamHandler(null)
  for (let i = 0; i < 5; i++) t.equal((await payout(proxy.url, '100')).status, 200, `payout ${i + 1} of 5 fits: the 4xx one was given back`)
  await assertProxyError(t, await payout(proxy.url, '1'), 403, 'AMOUNT_LIMIT_EXCEEDED', 'the day is full')
  await clock.advance(61_000)
  t.equal((await payout(proxy.url, '100')).status, 200, 'a new UTC day starts from zero')
})

t.test('20 parallel payouts never exceed the day limit', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: callersFile() }))
  await waitReady(proxy)
  const results = await Promise.all(Array.from({ length: 20 }, async () => await payout(proxy.url, '60')))
  const admitted = results.filter((r) => r.status === 200).length
  t.equal(admitted, 8, '8 × 60 = 480 <= 500; a 9th would be 540')
  const refused = results.filter((r) => r.status !== 200)
  t.equal(refused.length, 12)
  for (const r of refused) await assertProxyError(t, r, 403, 'AMOUNT_LIMIT_EXCEEDED', 'a payout past the day limit')
  t.equal(provider.upstreamRequests.length, admitted, 'only the admitted ones reached the provider')
})

t.test('day totals: kept when the provider answers 5xx or the connection is lost (the payout may have happened)', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: callersFile() }))
  await waitReady(proxy)
  const answers = [500, 502, 503, 'lost', 200]
  let n = 0
  provider.setUpstreamHandler(async (_req, res) => {
    const answer = answers[n++]
    if (answer === 'lost') { res.socket?.destroy(); return true }
    res.writeHead(Number(answer), { 'content-type': 'application/json' }).end('{}')
    return true
  })
  const statuses: number[] = []
  for (let i = 0; i < answers.length; i++) statuses.push((await payout(proxy.url, '100')).status)
  t.same(statuses, [500, 502, 503, 502, 200], 'the provider\'s 5xx pass through; the lost connection is the proxy\'s own 502')
  t.equal(n, 5, 'all five reached the provider')
  await assertProxyError(t, await payout(proxy.url, '"0.00000001"'), 403, 'AMOUNT_LIMIT_EXCEEDED', 'all five stay counted: 500 KES, the day is full')
  t.equal(n, 5, 'the refusal reached no upstream')
})

t.test('a replay, 409 or 422 is answered before the amount step and costs no amount', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: callersFile() }))
  await waitReady(proxy)
  const hold = deferred()
  t.teardown(() => { hold.resolve() })
  provider.setUpstreamHandler(async (_req, res, body) => {
    if (body.includes('"externalReference":"held"')) await hold.promise
    res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}')
    return true
  })
  t.equal((await payout(proxy.url, '100', 'KES', 'done')).status, 201, 'a payout of 100 KES (the day: 100 of 500)')
  for (let i = 0; i < 3; i++) {
    const replay = await payout(proxy.url, '100', 'KES', 'done')
    t.equal(replay.headers['idempotent-replayed'], 'true', `replay ${i + 1}`)
    await assertProxyError(t, await payout(proxy.url, '99', 'KES', 'done'), 422, 'IDEMPOTENCY_KEY_REUSED', `reuse ${i + 1}`)
  }
  const held = payout(proxy.url, '100', 'KES', 'held')
  await eventually(() => provider.upstreamRequests.length === 2, { what: 'the held payout to reach the provider' })
  for (let i = 0; i < 3; i++) await assertProxyError(t, await payout(proxy.url, '100', 'KES', 'held'), 409, 'IDEMPOTENCY_IN_PROGRESS', `in flight ${i + 1}`)
  hold.resolve()
  t.equal((await held).status, 201, 'the held payout (the day: 200 of 500)')
  for (let i = 0; i < 3; i++) t.equal((await payout(proxy.url, '100')).status, 201, `new payout ${i + 1} of 3 fits: none of the nine answers above cost anything`)
  await assertProxyError(t, await payout(proxy.url, '"0.00000001"'), 403, 'AMOUNT_LIMIT_EXCEEDED', 'and the day is exactly full')
})
