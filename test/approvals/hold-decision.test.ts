import t from 'tap'
import { parseCallersText } from '../../src/callers/callers-file.js'
import { decideHold, type HoldDecision } from '../../src/approvals/hold-decision.js'
import { judgeAmounts, toUnits, type ReadAmount } from '../../src/callers/amount-limits.js'
import { HeldJson } from '../../src/json/held-json.js'
import { folded } from '../helpers/canonical.js'

type Limits = Parameters<typeof decideHold>[0]

/** As the plugins run it: the amount step's one reading, then the hold decision over it (nothing when the amount step refused). */
function holdOf (limits: Limits, body: string, path: string, contentEncoding?: string): HoldDecision {
  const verdict = judgeAmounts(limits, { path: folded(path), body: new HeldJson(Buffer.from(body)), contentEncoding })
  return decideHold(limits, verdict.kind === 'within' ? verdict.amounts : [])
}

function limitsOf (yaml: string): Limits {
  const load = parseCallersText(`callers:\n  - id: a\n    keySha256: ${'a'.repeat(64)}\n    allow: [{}]\n    amountLimits:\n${yaml}`, '.yaml')
  if (!load.ok) throw new Error(load.problems.join('\n'))
  return load.callers[0]?.amountLimits ?? []
}

t.test('decideHold: above approveAbove and within perRequest is held; anything else goes on to the amount step', async (t) => {
  const limits = limitsOf(`      - paths: ["/payouts/**"]
        amount: /amount
        currency: /currency
        perRequest: { KES: 1000, USD: "50.00" }
        approveAbove: { KES: 100, USD: "10.5" }
`)
  const decide = (body: string, path = '/payouts'): string => {
    const d = holdOf(limits, body, path)
    return d.kind === 'hold' ? `hold:${d.amount} ${d.currency}` : 'pass'
  }
  const cases: Array<[string, string, string, string?]> = [
    ['below the threshold', '{"amount":99,"currency":"KES"}', 'pass'],
    ['at the threshold', '{"amount":"100.00","currency":"KES"}', 'pass'],
    ['just above it', '{"amount":"100.01","currency":"KES"}', 'hold:100.01 KES'],
    ['a number above it, as written', '{"amount":500,"currency":"KES"}', 'hold:500 KES'],
    ['at perRequest', '{"amount":1000,"currency":"KES"}', 'hold:1000 KES'],
    ['over perRequest: refused by the amount step, never held', '{"amount":1000.5,"currency":"KES"}', 'pass'],
    ['a decimal string threshold', '{"amount":"10.51","currency":"USD"}', 'hold:10.51 USD'],
    ['at a decimal string threshold', '{"amount":"10.50","currency":"USD"}', 'pass'],
    ['unreadable: the amount step answers 400', '{"amount":"1,000","currency":"KES"}', 'pass'],
    ['a path the entry does not cover', '{"amount":500,"currency":"KES"}', 'pass', '/balances'],
    ['a deeper path it covers', '{"amount":500,"currency":"KES"}', 'hold:500 KES', '/payouts/mobile'],
  ]
  for (const [name, body, expected, path] of cases) t.equal(decide(body, path), expected, name)
})

t.test('decideHold: a currency without approveAbove goes alone; an entry without approveAbove holds nothing', async (t) => {
  const limits = limitsOf(`      - amount: /amount
        currency: /currency
        perRequest: { KES: 1000, EUR: 1000 }
        approveAbove: { KES: 100 }
      - paths: ["/transfers"]
        amount: /value
        currency: /currency
        perRequest: { KES: 1000 }
`)
  const decide = (body: string, path: string): string => holdOf(limits, body, path).kind
  t.equal(decide('{"amount":900,"currency":"EUR"}', '/payouts'), 'pass')
  t.equal(decide('{"amount":900,"currency":"KES"}', '/payouts'), 'hold')
  t.equal(decide('{"amount":1,"value":900,"currency":"KES"}', '/transfers'), 'pass')
  t.equal(holdOf(limits, '{"amount":900,"currency":"KES"}', '/payouts', 'gzip').kind, 'pass', 'compressed: the amount step refuses it')
})

t.test('decideHold over readings: the first amount above its own entry\'s approveAbove holds', async (t) => {
  const limits = limitsOf(`      - amount: /amount
        currency: /currency
        perDay: { KES: 1000 }
      - amount: /fee
        currency: /currency
        perRequest: { KES: 1000, USD: 1000 }
        approveAbove: { KES: 10 }
`)
  const read = (entry: number, amount: string, currency = 'KES'): ReadAmount => ({ entry, amount, currency, units: toUnits(amount, 'up') ?? 0n, perDay: null })
  const cases: Array<[string, ReadAmount[], string]> = [
    ['nothing read', [], 'pass'],
    ['an entry without approveAbove, however large', [read(0, '900')], 'pass'],
    ['its own entry above', [read(0, '900'), read(1, '10.01')], 'hold:10.01 KES'],
    ['its own entry at the threshold', [read(0, '900'), read(1, '10')], 'pass'],
    ['a currency the threshold does not name', [read(1, '900', 'USD')], 'pass'],
    ['an entry the limits do not have', [read(7, '900')], 'pass'],
  ]
  for (const [name, amounts, expected] of cases) {
    const d = decideHold(limits, amounts)
    t.equal(d.kind === 'hold' ? `hold:${d.amount} ${d.currency}` : 'pass', expected, name)
  }
})

t.test('callers file: approveAbove takes numbers and plain decimal strings, and names a bad one; approver is a boolean', async (t) => {
  const file = (extra: string, callerExtra = ''): ReturnType<typeof parseCallersText> => parseCallersText(`callers:\n  - id: a\n    keySha256: ${'a'.repeat(64)}\n    allow: [{}]\n${callerExtra}    amountLimits:\n      - amount: /amount\n        currency: /currency\n${extra}`, '.yaml')
  const ok = file('        approveAbove: { KES: 10000, USD: "99.50" }\n', '    approver: true\n')
  t.ok(ok.ok)
  if (ok.ok) {
    t.same([...(ok.callers[0]?.amountLimits[0]?.approveAbove ?? [])], [['KES', '10000'], ['USD', '99.50']])
    t.equal(ok.callers[0]?.approver, true)
  }
  t.same(file('        approveAbove: { KES: "1,000" }\n'), { ok: false, problems: ['callers[0].amountLimits[0].approveAbove.KES: must be a plain decimal (a number or a string like "500.00")'] })
  t.same(file('        approveAbove: { KES: -5 }\n'), { ok: false, problems: ['callers[0].amountLimits[0].approveAbove.KES: must be a plain decimal (a number or a string like "500.00")'] })
  t.same(file('', '    approver: "yes"\n'), { ok: false, problems: ['callers[0].approver: must be true or false'] })
})
