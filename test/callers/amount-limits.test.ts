import type { IncomingHttpHeaders } from 'node:http'
import t from 'tap'
import { request } from 'undici'
import { judgeAmounts, toUnits } from '../../src/callers/amount-limits.js'
import { parseCallersText } from '../../src/callers/callers-file.js'
import { HeldJson } from '../../src/json/held-json.js'
import { payoutAgentCallersFile } from './payout-agent.js'
import { deferred } from '../helpers/deferred.js'
import { eventually } from '../helpers/eventually.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'

const KEY = 'pak_amount-agent-key-0123456789abcdefghijklmnopqrstuv'

function limitsOf (yaml: string): Parameters<typeof judgeAmounts>[0] {
  const load = parseCallersText(`callers:\n  - id: a\n    keySha256: ${'a'.repeat(64)}\n    allow: [{}]\n    amountLimits:\n${yaml}`, '.yaml')
  if (!load.ok) throw new Error(load.problems.join('\n'))
  return load.callers[0]?.amountLimits ?? []
}

t.test('toUnits: plain decimals only, rounding that can only refuse', async (t) => {
  t.equal(toUnits('0.1', 'up'), 10_000_000n)
  t.equal(toUnits('10', 'up'), 1_000_000_000n)
  t.equal(toUnits('0.000000001', 'up'), 1n, 'more decimals than the scale round an amount up')
  t.equal(toUnits('0.000000001', 'down'), 0n, 'and a limit down')
  for (const bad of ['-5', '1e400', '1,000', ' 1', '01', '1.', '.5', '+1', '']) t.equal(toUnits(bad, 'up'), null, JSON.stringify(bad))
})

t.test('judgeAmounts: unreadable, exceeded and within', async (t) => {
  const limits = limitsOf(`      - paths: ["/payouts/**"]
        amount: /amount
        currency: /currency
        perRequest: { KES: 100, USD: "0.3" }
        perDay: { KES: 500 }
`)
  const judge = (body: string, path = '/payouts', contentEncoding?: string): string => {
    const v = judgeAmounts(limits, { path, body: new HeldJson(Buffer.from(body)), contentEncoding })
    return v.kind === 'within' ? `within:${v.reservations.map((r) => `${r.currency}=${r.units}`).join(',')}` : v.kind
  }
  const cases: Array<[string, string, string, string?]> = [
    ['a number', '{"amount":100,"currency":"KES"}', 'within:KES=10000000000'],
    ['a decimal string', '{"amount":"99.5","currency":"KES"}', 'within:KES=9950000000'],
    ['0.3 against a limit of "0.3"', '{"amount":"0.3","currency":"USD"}', 'within:'],
    ['more decimals than the scale round the amount up, past the limit', '{"amount":"0.300000001","currency":"USD"}', 'exceeded'],
    ['a ninth decimal rounds up to one unit', '{"amount":"0.000000001","currency":"KES"}', 'within:KES=1'],
    ['a ninth decimal of zero adds nothing', '{"amount":"1.000000000","currency":"KES"}', 'within:KES=100000000'],
    ['over per request', '{"amount":"100.01","currency":"KES"}', 'exceeded'],
    ['unlisted currency', '{"amount":1,"currency":"EUR"}', 'exceeded'],
    ['negative', '{"amount":-5,"currency":"KES"}', 'unreadable'],
    ['exponent', '{"amount":1e400,"currency":"KES"}', 'unreadable'],
    ['small exponent', '{"amount":1e1,"currency":"KES"}', 'unreadable'],
    ['separator', '{"amount":"1,000","currency":"KES"}', 'unreadable'],
    ['missing amount', '{"currency":"KES"}', 'unreadable'],
    ['missing currency', '{"amount":1}', 'unreadable'],
    ['repeated member', '{"amount":1,"amount":1000,"currency":"KES"}', 'unreadable'],
    ['repeated currency', '{"amount":1,"currency":"KES","currency":"USD"}', 'unreadable'],
    ['not JSON', 'amount=1&currency=KES', 'unreadable'],
    ['compressed', '{"amount":1,"currency":"KES"}', 'unreadable', 'gzip'],
    ['deflated', '{"amount":1,"currency":"KES"}', 'unreadable', 'deflate'],
    ['brotli', '{"amount":1,"currency":"KES"}', 'unreadable', 'br'],
    ['"NaN"', '{"amount":"NaN","currency":"KES"}', 'unreadable'],
    ['a leading space', '{"amount":" 5","currency":"KES"}', 'unreadable'],
    ['hexadecimal', '{"amount":"0x10","currency":"KES"}', 'unreadable'],
    ['a boolean', '{"amount":true,"currency":"KES"}', 'unreadable'],
    ['an array', '{"amount":[],"currency":"KES"}', 'unreadable'],
    ['an array root', '[{"amount":1,"currency":"KES"}]', 'unreadable'],
    ['a string root', '"amount"', 'unreadable'],
    ['path the entry does not name', '{"amount":"nope"}', 'within:', '/balances'],
  ]
  for (const [name, body, expected, extra] of cases) {
    const got = extra === undefined ? judge(body) : extra.startsWith('/') ? judge(body, extra) : judge(body, '/payouts', extra)
    t.equal(got, expected, name)
  }
})

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
