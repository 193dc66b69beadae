/**
 * How the console spells what it shows, and who may decide (pure, table-tested): amounts never
 * through a float, a held body indented only when the indented text is the same value as the bytes
 * sent, what callers chose spelled out and cut, approvers by address or domain.
 */
import t from 'tap'
import { emailAddress, isApprover } from '../../src/console/approvers.js'
import { detailLines } from '../../src/console/approval-items.js'
import { groupedAmount, shownBody, shownText, shownTime, span, stateInWords } from '../../src/console/display.js'

t.test('amounts are grouped by their digits, never read as a number', async (t) => {
  const table: Array<[string, string]> = [
    ['0', '0'], ['999', '999'], ['1000', '1,000'], ['50000.25', '50,000.25'], ['1234567', '1,234,567'],
    ['123456789012345678901234', '123,456,789,012,345,678,901,234'], ['0.000001', '0.000001'], ['12.5000', '12.5000'],
  ]
  for (const [amount, shown] of table) t.equal(groupedAmount(amount), shown, amount)
})

t.test('times are UTC text with their ISO form; spans in whole units', async (t) => {
  t.same(shownTime(Date.UTC(2026, 10, 27, 9, 5, 7, 450)), { iso: '2026-11-27T09:05:07.450Z', utc: '2026-11-27 09:05:07 UTC' })
  const table: Array<[number, string]> = [[0, 'less than a minute'], [59_999, 'less than a minute'], [60_000, '1 min'], [-90_000, '1 min'], [3_600_000, '1 h'], [3_660_000, '1 h 1 min'], [86_400_000, '1 d'], [90_000_000, '1 d 1 h']]
  for (const [ms, text] of table) t.equal(span(ms), text, String(ms))
})

t.test('what a caller chose is spelled out (controls, bidi, zero-width) and cut with its length', async (t) => {
  t.same(shownText('ref-1', 10), { text: 'ref-1', cut: false, length: 5 })
  t.same(shownText('x'.repeat(10_000), 64), { text: `${'x'.repeat(64)}…`, cut: true, length: 10_000 })
  t.equal(shownText('pay\u202Eeno', 20).text, 'pay\\u202eeno', 'a right-to-left override cannot make a reference read backwards')
  t.equal(shownText('a\u200Bb\r\n', 20).text, 'a\\u200bb\\r\\n')
  t.equal(shownText('<script>', 20).text, '<script>', 'HTML is the template engine\'s to escape, not this')
})

t.test('a held body is indented only when that shows the very value that is sent', async (t) => {
  t.same(shownBody('{"amount":250,"to":{"phone":"+254700000000"}}'), { text: '{\n  "amount": 250,\n  "to": {\n    "phone": "+254700000000"\n  }\n}', pretty: true })
  const asSent: Array<[string, string]> = [
    ['{"to":"alice","to":"mallory"}', 'a repeated member: the provider may read the other one'],
    ['{"amount":12345678901234567890}', 'a number past a double\'s precision would be shown rounded'],
    ['{"amount":1e3}', 'an exponent would be shown as 1000'],
    ['{"amount":1.50}', 'a trailing zero would go'],
    ['{"amount": 5', 'not JSON'],
  ]
  for (const [body, why] of asSent) t.same(shownBody(body), { text: body, pretty: false }, why)
  t.equal(shownBody('{"to":"\u202Eevil"}').text, '{\n  "to": "\\u202eevil"\n}', 'a bidi override in a value is spelled out when indented')
  t.equal(shownBody('line one\nline\u0007two').text, 'line one\nline\\x07two', 'a body shown as sent keeps its lines and spells out controls')
})

t.test('approvers by address or by *@domain, without letter case; others read', async (t) => {
  const patterns = ['ann@example.com', '*@finance.example.com']
  const table: Array<[string, boolean]> = [
    ['ann@example.com', true], ['Ann@Example.com', true], ['bob@example.com', false], ['joe@finance.example.com', true],
    ['joe@sub.finance.example.com', false], ['joe@finance.example.com.evil', false], ['ann@example.com.evil', false],
  ]
  for (const [email, approver] of table) t.equal(isApprover(patterns, email), approver, email)
  t.equal(isApprover([], 'ann@example.com'), false)
})

t.test('an email address is one address, lower case; anything else is none', async (t) => {
  const table: Array<[string, string | null]> = [
    ['Ann@Example.com', 'ann@example.com'], [' ann@example.com ', 'ann@example.com'], ['ann', null], ['ann@example.com, bob@example.com', null],
    ['a b@example.com', null], ['"><script>@x', null], [`${'a'.repeat(250)}@example.com`, null], ['*@example.com', null],
  ]
  for (const [text, email] of table) t.equal(emailAddress(text), email, text)
})

t.test('a payment\'s state in words a person reads, every state of SPEC §12', async (t) => {
  const table: Array<[string, string]> = [
    ['succeeded', 'succeeded'], ['failed', 'failed'], ['pending', 'waiting for the provider'],
    ['stale', 'stale: the provider has not said'], ['unverified', 'unverified: its record failed verification'],
    ['unknown', 'unknown: the provider\'s answer never came'], ['sending', 'being sent to the provider'],
  ]
  for (const [state, words] of table) t.equal(stateInWords(state), words, state)
})

t.test('an approval card\'s detail lines: members present at the pointers, labelled by their last name, as sent', async (t) => {
  const pointers = ['/payoutMethod/accountName', '/payoutMethod/accountNumber', '/narration', '/a~1b', '/missing', '/nested']
  const body = '{"payoutMethod":{"accountName":"Ann\\u202eO","accountNumber":254700000001},"narration":"rent","a/b":"x","nested":{"k":1}}'
  t.same(detailLines(body, pointers).map((d) => [d.label, d.value.text]), [
    ['accountName', 'Ann\\u202eO'], ['accountNumber', '254700000001'], ['narration', 'rent'], ['a/b', 'x'],
  ], 'a number as spelled, a bidi control spelled out, an object and a missing member left out')
  t.same(detailLines('{"narration":"a","narration":"b"}', ['/narration']), [], 'a body with a repeated name shows none: which one is sent is not clear')
  t.same(detailLines('not json', ['/narration']), [])
  t.same(detailLines('{"amount":1e3}', ['/amount']).map((d) => d.value.text), ['1e3'], 'numbers as spelled in the body')
})
