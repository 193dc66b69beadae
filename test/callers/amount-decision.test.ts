/**
 * SPEC §7 `amountLimits` as a table over the pure decision (amount-limits.ts), no sockets: what is
 * a plain decimal, how amounts and limits are rounded, and every reason a body is unreadable or over
 * a limit. The proxy-level cases (day totals, parallel payouts) are in amount-limits.test.ts.
 */
import t from 'tap'
import { judgeAmounts, toUnits } from '../../src/callers/amount-limits.js'
import { parseCallersText } from '../../src/callers/callers-file.js'
import { HeldJson } from '../../src/json/held-json.js'

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
