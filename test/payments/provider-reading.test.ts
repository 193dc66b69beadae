/**
 * Reading the provider (SPEC §12, BAD_INPUTS "Payments"): the answer to a followed forward, a
 * look-up's answer and an event, each as a table; and the look-up path, whose values can never
 * lead off the base.
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import t from 'tap'
import { lookupPathOf, segmentOf } from '../../src/payments/lookup-path.js'
import { classifyStatus, decodedBody, MAX_PROVIDER_BODY_BYTES, readAnswer, readEvent, readLookup, type ReadingSettings } from '../../src/payments/provider-reading.js'

const settings: ReadingSettings = {
  transactionIdPointer: '/data/transactionId',
  statusPointer: '/data/status',
  succeededStatuses: ['successful', 'success', 'completed'],
  failedStatuses: ['failed', 'cancelled', 'reversed'],
  eventTransactionIdPointer: '/data/transactionId',
  eventReferencePointer: '/data/externalReference',
}
const body = (text: string): Buffer => Buffer.from(text)

t.test('the answer to a followed forward', async (t) => {
  const cases: Array<[string, number, string | null, unknown]> = [
    ['2xx with a string id and a status', 200, '{"success":true,"data":{"transactionId":"tx-1","status":"PENDING"}}', { kind: 'followed', transactionId: 'tx-1', providerStatus: 'PENDING' }],
    ['2xx with an integer id', 201, '{"data":{"transactionId":4711}}', { kind: 'followed', transactionId: '4711', providerStatus: null }],
    ['2xx with a final status', 200, '{"data":{"transactionId":"tx-1","status":"Successful"}}', { kind: 'followed', transactionId: 'tx-1', providerStatus: 'Successful' }],
    ['2xx with the id repeated on the way to it', 200, '{"data":{"transactionId":"tx-1"},"data":{"transactionId":"tx-2"}}', { kind: 'untracked', reason: /repeated on the way to \/data\/transactionId/ }],
    ['2xx with the id itself repeated', 200, '{"data":{"transactionId":"tx-1","transactionId":"tx-2"}}', { kind: 'untracked', reason: /repeated/ }],
    ['2xx with a number id that is not an integer', 200, '{"data":{"transactionId":1.5}}', { kind: 'untracked', reason: /not a non-empty string or an integer/ }],
    ['2xx with an object id', 200, '{"data":{"transactionId":{"id":"tx"}}}', { kind: 'untracked', reason: /not a non-empty string or an integer/ }],
    ['2xx with an empty id', 200, '{"data":{"transactionId":""}}', { kind: 'untracked', reason: /not a non-empty string/ }],
    ['2xx with an integer id past 2^53', 200, '{"data":{"transactionId":9007199254740993}}', { kind: 'untracked', reason: /not a non-empty string or an integer/ }],
    ['2xx without an id', 200, '{"success":true}', { kind: 'untracked', reason: /no transaction id at \/data\/transactionId/ }],
    ['2xx that is not JSON', 200, '<html>ok</html>', { kind: 'untracked', reason: /not JSON/ }],
    ['2xx without a body', 204, null, { kind: 'untracked', reason: /not JSON/ }],
    ['400', 400, '{"data":{"transactionId":"tx-1"}}', { kind: 'refused', status: 400 }],
    ['409', 409, null, { kind: 'refused', status: 409 }],
    ['500 with an id', 500, '{"data":{"transactionId":"tx-1"}}', { kind: 'lost' }],
    ['503', 503, null, { kind: 'lost' }],
    ['a redirect', 302, null, { kind: 'lost' }],
    ['300', 300, '{"data":{"transactionId":"tx-1"}}', { kind: 'lost' }],
    ['199', 199, '{"data":{"transactionId":"tx-1"}}', { kind: 'lost' }],
    ['299', 299, '{"data":{"transactionId":"tx-1"}}', { kind: 'followed' }],
  ]
  for (const [name, status, text, expected] of cases) t.match(readAnswer(status, text === null ? null : body(text), undefined, settings), expected, name)
  t.same(readAnswer(200, body('{"data":{"transactionId":"tx-1","status":7}}'), undefined, settings), { kind: 'followed', transactionId: 'tx-1', providerStatus: null }, 'a status that is not text is no status')
})

t.test('a compressed answer is decoded, within the bound', async (t) => {
  const text = '{"data":{"transactionId":"tx-z","status":"pending"}}'
  t.match(readAnswer(200, gzipSync(text), 'gzip', settings), { kind: 'followed', transactionId: 'tx-z' })
  t.match(readAnswer(200, brotliCompressSync(text), 'br', settings), { kind: 'followed', transactionId: 'tx-z' })
  t.match(readAnswer(200, gzipSync(text), 'x-gzip', settings), { kind: 'followed', transactionId: 'tx-z' })
  t.match(readAnswer(200, deflateSync(text), 'deflate', settings), { kind: 'followed', transactionId: 'tx-z' })
  t.match(readAnswer(200, gzipSync(text), [' GZIP '], settings), { kind: 'followed', transactionId: 'tx-z' }, 'one coding in a list of one, any case and spacing')
  t.match(readAnswer(200, body(text), 'identity', settings), { kind: 'followed' })
  t.match(readAnswer(200, body(text), 'gzip', settings), { kind: 'untracked' }, 'not really gzip')
  t.match(readAnswer(200, brotliCompressSync(text), 'zstd', settings), { kind: 'untracked' }, 'a coding it does not read')
  t.match(readAnswer(200, gzipSync(gzipSync(text)), ['gzip', 'gzip'], settings), { kind: 'untracked' }, 'two codings: not read')
  t.match(readAnswer(200, body(text), 'constructor', settings), { kind: 'untracked' }, 'a coding named like an object\'s own property')
  const bound = Buffer.alloc(MAX_PROVIDER_BODY_BYTES, 32)
  t.equal(decodedBody(bound, undefined), bound, 'a body of the bound is read')
  const past = Buffer.alloc(MAX_PROVIDER_BODY_BYTES + 1, 32)
  for (const [coding, packed] of [['gzip', gzipSync(past)], ['x-gzip', gzipSync(past)], ['deflate', deflateSync(past)], ['br', brotliCompressSync(past)]] as const) {
    t.equal(decodedBody(packed, coding), null, `a ${coding} bomb stops at the bound`)
  }
  t.equal(decodedBody(gzipSync('{}'), ['', 'gzip']), null, 'a list of codings is not read, empty members included')
  t.equal(decodedBody(Buffer.alloc(MAX_PROVIDER_BODY_BYTES + 1), undefined), null)
})

t.test('a look-up\'s answer: final, pending, or a failed look-up; never about another payment', async (t) => {
  const fromAnswer = { transactionId: 'tx-1', transactionIdFrom: 'answer' as const, externalReference: 'ref-1' }
  const fromEvent = { ...fromAnswer, transactionIdFrom: 'event' as const }
  const cases: Array<[string, number, string, typeof fromAnswer | typeof fromEvent, unknown]> = [
    ['successful', 200, '{"data":{"transactionId":"tx-1","status":"SUCCESSFUL","externalReference":"ref-1"}}', fromAnswer, { kind: 'final', state: 'succeeded', status: 'SUCCESSFUL' }],
    ['reversed', 200, '{"data":{"status":"reversed"}}', fromAnswer, { kind: 'final', state: 'failed' }],
    ['pending', 200, '{"data":{"status":"pending"}}', fromAnswer, { kind: 'pending', status: 'pending' }],
    ['a status the lists do not know', 200, '{"data":{"status":"on_hold"}}', fromAnswer, { kind: 'pending', status: 'on_hold' }],
    ['no status', 200, '{"data":{}}', fromAnswer, { kind: 'failed', reason: /no status text/ }],
    ['a status that is not text', 200, '{"data":{"status":1}}', fromAnswer, { kind: 'failed' }],
    ['500', 500, '{"data":{"status":"successful"}}', fromAnswer, { kind: 'failed', reason: 'HTTP 500' }],
    ['404', 404, '{}', fromAnswer, { kind: 'failed', reason: 'HTTP 404' }],
    ['not JSON', 200, 'successful', fromAnswer, { kind: 'failed', reason: /not JSON/ }],
    ['another transaction', 200, '{"data":{"transactionId":"tx-2","status":"successful"}}', fromAnswer, { kind: 'failed', reason: /another transaction/ }],
    ['another reference', 200, '{"data":{"status":"successful","externalReference":"ref-2"}}', fromAnswer, { kind: 'failed', reason: /another reference/ }],
    ['the status repeated', 200, '{"data":{"status":"failed","status":"successful"}}', fromAnswer, { kind: 'failed' }],
    ['an id from an event, the answer naming no reference', 200, '{"data":{"transactionId":"tx-1","status":"successful"}}', fromEvent, { kind: 'failed', reason: /came from an event/ }],
    ['an id from an event, the answer naming ours', 200, '{"data":{"status":"successful","externalReference":"ref-1"}}', fromEvent, { kind: 'final', state: 'succeeded' }],
    ['the transaction id repeated', 200, '{"data":{"transactionId":"tx-1","transactionId":"tx-1","status":"successful"}}', fromAnswer, { kind: 'failed', reason: /another transaction/ }],
    ['a transaction id that is not one', 200, '{"data":{"transactionId":["tx-1"],"status":"successful"}}', fromAnswer, { kind: 'failed', reason: /another transaction/ }],
    ['the reference repeated', 200, '{"data":{"externalReference":"ref-1","externalReference":"ref-1","status":"successful"}}', fromAnswer, { kind: 'failed', reason: /another reference/ }],
    ['a reference that is not text', 200, '{"data":{"externalReference":7,"status":"successful"}}', fromAnswer, { kind: 'failed', reason: /another reference/ }],
    ['300', 300, '{"data":{"status":"successful"}}', fromAnswer, { kind: 'failed', reason: 'HTTP 300' }],
    ['199', 199, '{"data":{"status":"successful"}}', fromAnswer, { kind: 'failed', reason: 'HTTP 199' }],
    ['299', 299, '{"data":{"status":"successful"}}', fromAnswer, { kind: 'final' }],
  ]
  for (const [name, status, text, record, expected] of cases) t.match(readLookup(status, body(text), undefined, record, settings), expected, name)
  t.match(readLookup(200, body('{"data":{"transactionId":"tx-7","status":"successful","externalReference":"ref-1"}}'), undefined, { ...fromAnswer, transactionId: null }, settings), { kind: 'final' }, 'looked up by reference: any transaction id it names')
})

t.test('an event: its transaction id, reference and status; unreadable ones are never matched', async (t) => {
  t.same(readEvent(body('{"event":"payout.updated","data":{"transactionId":"tx-1","externalReference":"ref-1","status":"successful"}}'), settings), { kind: 'read', transactionId: 'tx-1', reference: 'ref-1', status: 'successful' })
  t.same(readEvent(body('{"data":{"transactionId":12,"externalReference":""}}'), settings), { kind: 'read', transactionId: '12', reference: null, status: null })
  t.match(readEvent(body('{"data":{"externalReference":"a","externalReference":"b"}}'), settings), { kind: 'unreadable' })
  t.same(readEvent(body('{"data":{"transactionId":"a","transactionId":"b","externalReference":"r"}}'), settings), { kind: 'unreadable', reason: 'a member name is repeated on the way to the transaction id or the reference' })
  t.match(readEvent(body('{"data":{"transactionId":"a"},"data":{}}'), settings), { kind: 'unreadable' })
  t.match(readEvent(body('form=1'), settings), { kind: 'unreadable', reason: 'not JSON' })
  t.same(readEvent(body('[1,2]'), settings), { kind: 'read', transactionId: null, reference: null, status: null })
})

t.test('statuses compare without letter case; anything unlisted is pending', async (t) => {
  t.equal(classifyStatus('Completed', settings), 'succeeded')
  t.equal(classifyStatus('CANCELLED', settings), 'failed')
  t.equal(classifyStatus('processing', settings), 'pending')
  t.equal(classifyStatus(null, settings), 'pending')
})

t.test('the look-up path: each value one encoded segment, never a way off the base', async (t) => {
  const paths = { fiat: '/transactions/{transactionId}', crypto: null }
  const record = { interface: 'fiat', transactionId: 'tx-1', externalReference: 'ref 1' }
  t.equal(lookupPathOf(paths, record), '/transactions/tx-1')
  for (const [id, path] of [['..', null], ['.', null], ['...', null], ['tx.', '/transactions/tx.'], ['.tx', '/transactions/.tx'], ['\u0001', '/transactions/%01'], ['a/b', '/transactions/a%2Fb'], ['%2e%2e', '/transactions/%252e%252e'], ['a\\b', '/transactions/a%5Cb'], ['ü?#', '/transactions/%C3%BC%3F%23'], ['4711', '/transactions/4711'], ['tx.1~a', '/transactions/tx.1~a']]) {
    t.equal(lookupPathOf(paths, { ...record, transactionId: id as string }), path, JSON.stringify(id))
  }
  t.equal(lookupPathOf(paths, { ...record, transactionId: null }), null, 'no id, no look-up')
  t.equal(lookupPathOf(paths, { ...record, interface: 'crypto' }), null, 'no crypto path: events alone')
  t.equal(lookupPathOf({ fiat: '/v1/{externalReference}/status' }, { ...record, transactionId: null }), '/v1/ref%201/status', 'by reference, without an id')
  t.equal(segmentOf('A-z_0'), 'A-z_0')
  t.equal(segmentOf(''), null)
})
