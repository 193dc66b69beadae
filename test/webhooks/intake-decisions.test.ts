/** The intake's pure judges (SPEC §10), table-tested: source address, event keys, stored headers, path token. */
import t from 'tap'
import { createHash } from 'node:crypto'
import { blockListOf, parseCidr, type Cidr } from '../../src/config/network-lists.js'
import { eventKeys } from '../../src/webhooks/event-key.js'
import { createPathTokenMatcher } from '../../src/webhooks/path-token.js'
import { sourceAddress } from '../../src/webhooks/source-address.js'
import { headersToStore } from '../../src/webhooks/stored-headers.js'

const trusted = blockListOf(['10.0.0.0/8', '::1/128'].map((c) => parseCidr(c) as Cidr))

t.test('source address', async (t) => {
  const cases: Array<[string, string | string[] | undefined, string, string]> = [
    ['198.51.100.1', '203.0.113.5', '198.51.100.1', 'an untrusted peer: its header is ignored'],
    ['10.0.0.2', undefined, '10.0.0.2', 'a trusted peer without the header'],
    ['10.0.0.2', '203.0.113.5', '203.0.113.5', 'a trusted peer: the forwarded address'],
    ['10.0.0.2', '1.1.1.1, 203.0.113.5, 10.9.9.9', '203.0.113.5', 'the right-most address that is not a trusted proxy'],
    ['10.0.0.2', '203.0.113.5, garbage', '10.0.0.2', 'something that is not an address ends the chain'],
    ['::ffff:10.0.0.2', '2001:db8::7', '2001:db8::7', 'an IPv4-mapped trusted peer, an IPv6 source'],
    ['::ffff:198.51.100.1', undefined, '198.51.100.1', 'an IPv4-mapped peer is reported as IPv4'],
    ['::ffff:c633:6401', undefined, '::ffff:c633:6401', 'an IPv4-mapped peer in hex is left whole'],
    ['10.0.0.2', 'garbage', '10.0.0.2', 'a left-most entry that is not an address: the peer'],
    ['10.0.0.2', ['1.1.1.1', '203.0.113.5, 10.9.9.9'], '203.0.113.5', 'the header sent more than once is one list'],
    ['10.0.0.2', '10.1.1.1, 10.9.9.9', '10.1.1.1', 'every hop a trusted proxy: the left-most'],
  ]
  for (const [peer, xff, expected, name] of cases) t.equal(sourceAddress(peer, xff, trusted), expected, name)
})

t.test('event keys', async (t) => {
  const settings = { eventIdPointer: '/data/id', eventIdHeader: 'x-event-id', orderKeyPointer: '/ref' }
  const hashOf = (s: string): string => `sha256:${createHash('sha256').update(s).digest('hex')}`
  const cases: Array<[string, string | undefined, string, string | null, string]> = [
    ['{"data":{"id":"e1"},"ref":"pay_1"}', undefined, 'id:e1', 'pay_1', 'the pointer'],
    ['{"data":{"id":"e1"}}', 'h1', 'id:h1', null, 'the header wins'],
    ['{"data":{"id":42}}', undefined, 'id:42', null, 'an integer id as its decimal text'],
    ['{"data":{"id":4.5}}', undefined, hashOf('{"data":{"id":4.5}}'), null, 'a fraction: the hash'],
    ['{"data":{"id":""}}', undefined, hashOf('{"data":{"id":""}}'), null, 'an empty id: the hash'],
    ['{"data":{"id":"a"},"data":{"id":"b"}}', undefined, hashOf('{"data":{"id":"a"},"data":{"id":"b"}}'), null, 'a repeated member: the hash'],
    ['not json', undefined, hashOf('not json'), null, 'not JSON: the hash'],
    ['{"ref":["x"]}', undefined, hashOf('{"ref":["x"]}'), null, 'an order key that is not a string: none'],
  ]
  for (const [body, header, key, orderKey, name] of cases) {
    const keys = eventKeys(Buffer.from(body), header, settings)
    t.equal(keys.key, key, `${name}: key`)
    t.equal(keys.orderKey, orderKey, `${name}: order key`)
  }
  t.equal(eventKeys(Buffer.from('{"data":{"id":"e1"}}'), 'h', { ...settings, eventIdHeader: null }).key, 'id:e1', 'a header not configured is not read')
  t.equal(eventKeys(Buffer.from('{"data":{"id":"e1"}}'), ['h1', 'h2'], settings).key, 'id:e1', 'a header sent twice is not an id: the pointer')
  t.equal(eventKeys(Buffer.from('{"data":{"id":"e1"}}'), '', settings).key, 'id:e1', 'an empty header is not an id: the pointer')
})

t.test('stored headers drop hop-by-hop, connection-listed, credentials, forwarding and the verification header', async (t) => {
  const raw = ['Host', 'x', 'Connection', 'keep-alive, X-Hop', 'X-Hop', '1', 'Content-Type', 'application/json', 'Content-Length', '2', 'Cookie', 'c', 'Authorization', 'a',
    'X-Forwarded-For', '1.2.3.4', 'X-Webhook-Signature', 'secret', 'Webhook-Signature', 'v1,x', 'X-Provider', 'p', 'Transfer-Encoding', 'chunked']
  t.same(headersToStore(raw, 'x-webhook-signature'), [['content-type', 'application/json'], ['x-provider-webhook-signature', 'v1,x'], ['x-provider', 'p']])
})

t.test('stored headers: each dropped name, each renamed one, and only the Connection header lists names to drop', async (t) => {
  const dropped = ['Connection', 'Keep-Alive', 'Proxy-Connection', 'TE', 'Trailer', 'Transfer-Encoding', 'Upgrade', 'Proxy-Authorization', 'Proxy-Authenticate',
    'Host', 'Content-Length', 'Cookie', 'Authorization', 'Expect', 'Forwarded', 'X-Real-IP', 'X-Forwarded-Proto']
  const sig = 'x-webhook-signature'
  for (const name of dropped) t.same(headersToStore([name, 'v', 'X-Keep', 'k'], sig), [['x-keep', 'k']], `${name} is not stored`)
  for (const name of ['Webhook-Id', 'Webhook-Timestamp', 'Webhook-Signature']) {
    t.same(headersToStore([name, 'v'], sig), [[`x-provider-${name.toLowerCase()}`, 'v']], `${name} is renamed`)
  }
  t.same(headersToStore(['X-Note', 'x-keep', 'X-Keep', 'k'], sig), [['x-note', 'x-keep'], ['x-keep', 'k']], 'a value naming a header drops it only in Connection')
  t.same(headersToStore(['X-Sig', 's', 'X-Keep', 'k'], 'x-sig'), [['x-keep', 'k']], 'the verification header, whatever its name')
  t.same(headersToStore(['X-Webhook-Signature', 's', 'X-Keep', 'k'], 'x-sig'), [['x-webhook-signature', 's'], ['x-keep', 'k']], 'the default name is an ordinary header when another one is configured')
  t.same(headersToStore([], sig), [])
})

t.test('stored headers: names that only ever carry what the sidecar says are dropped when a sender sends them', async (t) => {
  const sig = 'x-webhook-signature'
  for (const name of ['Webhook-Conflict', 'X-Provider-Webhook-Id', 'X-Provider-Webhook-Timestamp', 'X-Provider-Webhook-Signature', 'x-provider-webhook-anything']) {
    t.same(headersToStore([name, 'forged', 'X-Keep', 'k'], sig), [['x-keep', 'k']], `${name} is not stored`)
  }
  t.same(headersToStore(['X-Provider-Webhook-Id', 'forged', 'Webhook-Id', 'real'], sig), [['x-provider-webhook-id', 'real']], 'only the renamed provider header carries the name')
  t.same(headersToStore(['X-Provider-Trace', 't'], sig), [['x-provider-trace', 't']], 'other x-provider-* headers are the provider\'s own')
})

t.test('path token matcher accepts the current and previous tokens only', async (t) => {
  const matches = createPathTokenMatcher(['wht_current_current_current', 'wht_previous_previous_prev'])
  t.ok(matches('wht_current_current_current'))
  t.ok(matches('wht_previous_previous_prev'))
  t.notOk(matches('wht_current_current_curren'))
  t.notOk(matches('wht_current_current_currentx'))
  t.notOk(matches(''))
})
