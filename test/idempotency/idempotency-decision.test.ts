import t from 'tap'
import { decideIdempotency, headersToRecord, isRecordable, type RequestFacts } from '../../src/idempotency/idempotency-decision.js'
import { HeldJson } from '../../src/json/held-json.js'
import { folded } from '../helpers/canonical.js'

const held = (text: string): HeldJson => new HeldJson(Buffer.from(text))

const facts = (over: Partial<RequestFacts> = {}): RequestFacts => ({
  method: 'POST',
  callerId: 'payout-agent',
  environment: 'sandbox',
  iface: 'fiat',
  path: folded('/payouts'),
  contentEncoding: undefined,
  body: held('{"externalReference":"r-1","amount":"1.00"}'),
  keyPointer: '/externalReference',
  ...over,
})

function keyOf (over: Partial<RequestFacts>): string {
  const decision = decideIdempotency(facts(over))
  if (decision.kind !== 'check') throw new Error(`not checked: ${decision.kind}`)
  return decision.key
}

t.test('the record key: caller, environment, interface, method, path and reference, hashed', async (t) => {
  const base = keyOf({})
  t.match(base, /^[0-9a-f]{64}$/)
  t.equal(keyOf({ body: held('{"amount":"2.00","externalReference":"r-1"}') }), base, 'the body does not change the key')
  for (const [label, over] of [
    ['caller', { callerId: 'other-agent' }],
    ['environment', { environment: 'production' }],
    ['interface', { iface: 'crypto' }],
    ['method', { method: 'PUT' }],
    ['path', { path: folded('/payouts/1') }],
    ['reference', { body: held('{"externalReference":"r-2"}') }],
  ] as Array<[string, Partial<RequestFacts>]>) {
    t.not(keyOf(over), base, `another ${label} is another record`)
  }
  t.not(keyOf({ callerId: 'a', path: folded('/b/c') }), keyOf({ callerId: 'a/b', path: folded('/c') }), 'fields cannot run into each other')
})

t.test('one reference under any spelling of one path is one record key (SPEC §8)', async (t) => {
  const base = keyOf({ path: folded('/v1/payouts') })
  for (const spelling of ['/V1/Payouts', '/v1/payouts/', '/v1/PAYOUTS/', '/%76%31/pay%6Fu%74s']) {
    t.equal(keyOf({ path: folded(spelling) }), base, spelling)
  }
})

t.test('what is judged and what is not', async (t) => {
  const cases: Array<[string, Partial<RequestFacts>, string]> = [
    ['POST with a reference', {}, 'check'],
    ['PATCH with a reference', { method: 'PATCH' }, 'check'],
    ['GET', { method: 'GET' }, 'skip'],
    ['DELETE', { method: 'DELETE' }, 'skip'],
    ['a streamed body', { body: null }, 'skip'],
    ['gzip', { contentEncoding: 'gzip' }, 'skip'],
    ['identity encoding', { contentEncoding: 'identity' }, 'check'],
    ['not JSON', { body: held('externalReference=r-1') }, 'skip'],
    ['an empty reference', { body: held('{"externalReference":""}') }, 'skip'],
    ['a number', { body: held('{"externalReference":7}') }, 'skip'],
    ['a root array', { body: held('[{"externalReference":"r"}]') }, 'skip'],
    ['a repeated reference', { body: held('{"externalReference":"a","externalReference":"a"}') }, 'refuse'],
    ['a repeated parent', { body: held('{"m":{"ref":"a"},"m":{"ref":"b"}}'), keyPointer: '/m/ref' }, 'refuse'],
    ['a repeated member elsewhere', { body: held('{"externalReference":"a","x":1,"x":2}') }, 'check'],
  ]
  for (const [label, over, kind] of cases) t.equal(decideIdempotency(facts(over)).kind, kind, label)
  const refused = decideIdempotency(facts({ body: held('{"externalReference":"a","externalReference":"b"}') }))
  t.match(refused, { kind: 'refuse', error: { code: 'EXTERNAL_REFERENCE_REQUIRED', statusCode: 400, message: /repeats a member name/ } }, 'refused with 400 EXTERNAL_REFERENCE_REQUIRED')
})

t.test('a body repeating a member elsewhere is fingerprinted by its bytes, the rest by canonical JSON', async (t) => {
  const fp = (body: string): string => {
    const d = decideIdempotency(facts({ body: held(body) }))
    if (d.kind !== 'check') throw new Error(`not checked: ${d.kind}`)
    return d.fingerprint
  }
  t.equal(fp('{"externalReference":"a","x":1}'), fp('{"x":1, "externalReference":"a"}'))
  t.not(fp('{"externalReference":"a","x":1}'), fp('{"externalReference":"a","x":2}'))
  t.not(fp('{"externalReference":"a","x":1,"x":2}'), fp('{"externalReference":"a","x":2}'), 'JSON.parse would see the same value; the bytes differ')
  t.equal(fp('{"externalReference":"a","x":1,"x":2}'), fp('{"externalReference":"a","x":1,"x":2}'))
})

t.test('recorded answers: 2xx and 4xx other than 401, 408, 409, 425, 429', async (t) => {
  const table: Array<[number, boolean]> = [
    [100, false], [199, false], [200, true], [201, true], [204, true], [299, true], [300, false], [301, false], [304, false], [400, true], [401, false], [403, true],
    [404, true], [408, false], [409, false], [410, true], [422, true], [425, false], [429, false], [499, true], [500, false], [502, false], [503, false], [504, false],
  ]
  for (const [status, recorded] of table) t.equal(isRecordable(status), recorded, String(status))
})

t.test('recorded headers: end-to-end ones, not those each answer gets afresh', async (t) => {
  t.same(headersToRecord({
    'Content-Type': 'application/json', 'content-length': 12, date: 'x', connection: 'keep-alive', 'Keep-Alive': 'timeout=5',
    'transfer-encoding': 'chunked', 'X-Request-Id': 'r-1', 'set-cookie': ['a', 'b'], 'x-n': 5, 'x-u': undefined,
  }), {
    'content-type': 'application/json', 'set-cookie': ['a', 'b'], 'x-n': '5',
  })
})
