/** SPEC §16's one reading of a payout and its match key, table-tested. */
import t from 'tap'
import { HeldJson } from '../../src/json/held-json.js'
import { comparableRecipient, matchKey, readPayout } from '../../src/payouts/payout-reading.js'

const POINTERS = { amount: '/amount', currency: '/currency', recipients: ['/payoutMethod/accountNumber', '/recipient', '/phoneNumber'] }
const read = (text: string, encoding?: string): ReturnType<typeof readPayout> => readPayout(new HeldJson(Buffer.from(text)), encoding, POINTERS)
const owner = { caller: 'agent', environment: 'sandbox', interface: 'fiat' }

t.test('what counts as one recipient', async (t) => {
  for (const [a, b] of [['+254 700 000 001', '254700000001'], ['GB29 NWBK', 'gb29nwbk'], ['\t+1\u00a0555', '1555']] as const) {
    t.equal(comparableRecipient(a), comparableRecipient(b), `${JSON.stringify(a)} is ${JSON.stringify(b)}`)
  }
  t.not(comparableRecipient('254700000001'), comparableRecipient('254700000002'))
  t.equal(comparableRecipient('++1'), '+1', 'only one leading + is taken away')
})

t.test('a payout read', async (t) => {
  t.same(read('{"amount":100,"currency":"KES","recipient":"+254 700"}'), { units: '10000000000', currency: 'KES', recipient: '254700' })
  t.same(read('{"amount":"100.00","currency":"KES","recipient":254700}'), { units: '10000000000', currency: 'KES', recipient: '254700' }, 'a number is its digits; "100.00" is 100')
  t.same(read('{"amount":1,"currency":"KES","payoutMethod":{"accountNumber":"A1"},"recipient":"B2"}')?.recipient, 'a1', 'the first pointer that holds a value')
  t.same(read('{"amount":1,"currency":"KES","payoutMethod":{"accountNumber":["A1"]},"recipient":"B2"}')?.recipient, 'b2', 'an array holds none: the next one')
  t.same(read('{"amount":1,"currency":"KES","payoutMethod":{"accountNumber":"   "},"recipient":"B2"}')?.recipient, 'b2', 'spaces only hold none')
  for (const [label, text] of [
    ['no recipient', '{"amount":1,"currency":"KES"}'],
    ['a recipient object', '{"amount":1,"currency":"KES","recipient":{"phone":"1"}}'],
    ['a boolean recipient', '{"amount":1,"currency":"KES","recipient":true}'],
    ['an amount with an exponent', '{"amount":1e3,"currency":"KES","recipient":"1"}'],
    ['a negative amount', '{"amount":-1,"currency":"KES","recipient":"1"}'],
    ['no currency', '{"amount":1,"recipient":"1"}'],
    ['an empty currency', '{"amount":1,"currency":"","recipient":"1"}'],
    ['a repeated member', '{"amount":1,"amount":2,"currency":"KES","recipient":"1"}'],
    ['not JSON', 'amount=1'],
  ] as const) t.equal(read(text), null, `${label}: never a duplicate`)
  t.equal(read('{"amount":1,"currency":"KES","recipient":"1"}', 'gzip'), null, 'a compressed body is not read')
})

t.test('the match key: the same payout of the same owner, and nothing else', async (t) => {
  const payout = { units: '100', currency: 'KES', recipient: '254700' }
  t.equal(matchKey(owner, payout), matchKey(owner, { ...payout }))
  t.match(matchKey(owner, payout), /^[0-9a-f]{64}$/)
  for (const other of [{ ...owner, caller: 'other' }, { ...owner, environment: 'production' }, { ...owner, interface: 'crypto' }]) t.not(matchKey(other, payout), matchKey(owner, payout))
  for (const other of [{ ...payout, units: '101' }, { ...payout, currency: 'UGX' }, { ...payout, recipient: '254701' }]) t.not(matchKey(owner, other), matchKey(owner, payout))
  t.not(matchKey({ ...owner, caller: 'a"b' }, payout), matchKey({ ...owner, caller: 'a' }, { ...payout, currency: 'b"KES' }), 'fields cannot run into each other')
})
