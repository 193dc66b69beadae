/**
 * SPEC §7 `amountLimits` as a table over the pure decision (amount-limits.ts), no sockets: what is
 * a plain decimal, how amounts and limits are rounded, and every reason a body is unreadable or over
 * a limit. The proxy-level cases (day totals, parallel payouts) are in amount-limits.test.ts.
 */
import t from 'tap'
import { BODY_METHODS, judgeAmounts, limitUnits, toUnits, type AmountVerdict } from '../../src/callers/amount-limits.js'
import { parseCallersText } from '../../src/callers/callers-file.js'
import { HeldJson } from '../../src/json/held-json.js'
import { folded } from '../helpers/canonical.js'

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

t.test('judgeAmounts: unreadable, exceeded and within, each with its reason', async (t) => {
  const limits = limitsOf(`      - paths: ["/payouts/**"]
        amount: /amount
        currency: /currency
        perRequest: { KES: 100, USD: "0.3" }
        perDay: { KES: 500, EUR: 50 }
`)
  const judge = (body: string | null, path: string, contentEncoding: string | undefined): string => {
    const v = judgeAmounts(limits, { path: folded(path), body: body === null ? null : new HeldJson(Buffer.from(body)), contentEncoding })
    return v.kind === 'within' ? `within:${v.amounts.map((r) => `${r.entry}/${r.amount} ${r.currency}=${r.units}/${r.perDay ?? '-'}`).join(',')}` : `${v.kind}: ${v.reason}`
  }
  const KES_DAY = 50_000_000_000n
  const cases: Array<[string, string | null, string, { path?: string, encoding?: string }?]> = [
    ['a number', '{"amount":100,"currency":"KES"}', `within:0/100 KES=10000000000/${KES_DAY}`],
    ['a decimal string', '{"amount":"99.5","currency":"KES"}', `within:0/99.5 KES=9950000000/${KES_DAY}`],
    ['0.3 against a per-request limit of "0.3", no day limit for USD', '{"amount":"0.3","currency":"USD"}', 'within:0/0.3 USD=30000000/-'],
    ['a currency with a day limit only', '{"amount":"60","currency":"EUR"}', 'within:0/60 EUR=6000000000/5000000000'],
    ['more decimals than the scale round the amount up, past the limit', '{"amount":"0.300000001","currency":"USD"}', 'exceeded: the amount is over the per-request limit'],
    ['a ninth decimal rounds up to one unit', '{"amount":"0.000000001","currency":"KES"}', `within:0/0.000000001 KES=1/${KES_DAY}`],
    ['a ninth decimal of zero adds nothing', '{"amount":"1.000000000","currency":"KES"}', `within:0/1.000000000 KES=100000000/${KES_DAY}`],
    ['over per request', '{"amount":"100.01","currency":"KES"}', 'exceeded: the amount is over the per-request limit'],
    ['unlisted currency', '{"amount":1,"currency":"GBP"}', 'exceeded: the currency is not listed in this caller\'s limits'],
    ['an empty currency', '{"amount":1,"currency":""}', 'unreadable: no currency'],
    ['negative', '{"amount":-5,"currency":"KES"}', 'unreadable: the amount is not a plain decimal'],
    ['exponent', '{"amount":1e400,"currency":"KES"}', 'unreadable: the amount is not a plain decimal'],
    ['small exponent', '{"amount":1e1,"currency":"KES"}', 'unreadable: the amount is not a plain decimal'],
    ['separator', '{"amount":"1,000","currency":"KES"}', 'unreadable: the amount is not a plain decimal'],
    ['missing amount', '{"currency":"KES"}', 'unreadable: no amount'],
    ['missing currency', '{"amount":1}', 'unreadable: no currency'],
    ['repeated amount', '{"amount":1,"amount":1000,"currency":"KES"}', 'unreadable: a member name is repeated on the way to the amount or currency'],
    ['repeated currency', '{"amount":1,"currency":"KES","currency":"USD"}', 'unreadable: a member name is repeated on the way to the amount or currency'],
    ['not JSON', 'amount=1&currency=KES', 'unreadable: the body is not JSON'],
    ['no body (streamed)', null, 'unreadable: no body'],
    ['compressed', '{"amount":1,"currency":"KES"}', 'unreadable: the body is compressed', { encoding: 'gzip' }],
    ['deflated', '{"amount":1,"currency":"KES"}', 'unreadable: the body is compressed', { encoding: 'deflate' }],
    ['brotli', '{"amount":1,"currency":"KES"}', 'unreadable: the body is compressed', { encoding: 'br' }],
    ['"NaN"', '{"amount":"NaN","currency":"KES"}', 'unreadable: the amount is not a plain decimal'],
    ['a leading space', '{"amount":" 5","currency":"KES"}', 'unreadable: the amount is not a plain decimal'],
    ['hexadecimal', '{"amount":"0x10","currency":"KES"}', 'unreadable: the amount is not a plain decimal'],
    ['a boolean', '{"amount":true,"currency":"KES"}', 'unreadable: no amount'],
    ['an array', '{"amount":[],"currency":"KES"}', 'unreadable: no amount'],
    ['an array root', '[{"amount":1,"currency":"KES"}]', 'unreadable: no amount'],
    ['a string root', '"amount"', 'unreadable: no amount'],
    ['a path the entry does not name: nothing read', '{"amount":"nope"}', 'within:', { path: '/balances' }],
    ['a path the entry does not name, no body', null, 'within:', { path: '/balances' }],
    ['a path the entry does not name, compressed', 'x', 'within:', { path: '/balances', encoding: 'gzip' }],
  ]
  for (const [name, body, expected, extra] of cases) t.equal(judge(body, extra?.path ?? '/payouts', extra?.encoding), expected, name)
})

t.test('judgeAmounts: every entry that names the path is judged, in order', async (t) => {
  const limits = limitsOf(`      - amount: /amount
        currency: /currency
        perDay: { KES: 1000 }
      - paths: ["/payouts/**"]
        amount: /fee/amount
        currency: /fee/currency
        perRequest: { KES: 5 }
        perDay: { KES: 20 }
`)
  const judge = (body: string, path = '/payouts'): AmountVerdict => judgeAmounts(limits, { path: folded(path), body: new HeldJson(Buffer.from(body)), contentEncoding: undefined })
  t.same(judge('{"amount":"10","currency":"KES","fee":{"amount":"1","currency":"KES"}}'), {
    kind: 'within',
    amounts: [
      { entry: 0, amount: '10', currency: 'KES', units: 1_000_000_000n, perDay: 100_000_000_000n },
      { entry: 1, amount: '1', currency: 'KES', units: 100_000_000n, perDay: 2_000_000_000n },
    ],
  }, 'one reading per entry, each with its own day limit')
  t.same(judge('{"amount":"10","currency":"KES"}', '/balances'), { kind: 'within', amounts: [{ entry: 0, amount: '10', currency: 'KES', units: 1_000_000_000n, perDay: 100_000_000_000n }] }, 'only the entries that name the path')
  t.match(judge('{"amount":"10","currency":"KES","fee":{"amount":"6","currency":"KES"}}'), { kind: 'exceeded' }, 'the second entry refuses')
  t.match(judge('{"amount":"10","currency":"KES","fee":{"amount":"1","currency":"KES","currency":"USD"}}'), { kind: 'unreadable' }, 'a repeated member under the second entry\'s pointer')
})

t.test('limitUnits: a limit is rounded down and held within the store\'s bound (2^63 - 1 units)', async (t) => {
  const max = 2n ** 63n - 1n
  t.equal(limitUnits('0.000000019'), 1n, 'rounded down')
  t.equal(limitUnits('92233720368.54775807'), max, 'exactly the bound')
  t.equal(limitUnits('92233720368.54775808'), max, 'one unit over is held at the bound')
  t.equal(limitUnits('100000000000000000000000'), max, 'far over')
  t.equal(limitUnits('not a decimal'), 0n, 'a limit that is not a decimal (refused by the file check) admits nothing')
})

t.test('the methods whose bodies caller rules read', async (t) => {
  t.same([...BODY_METHODS].sort(), ['PATCH', 'POST', 'PUT'])
})
