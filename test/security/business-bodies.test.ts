import t from 'tap'
import { assertStillServes, send, startRig } from './rig.js'
import { request } from './raw-client.js'

/**
 * The proxy does not judge business bodies: malformed JSON and prototype-pollution keys reach the
 * provider exactly as sent. Parsing and re-serialising would change bytes (key order, whitespace,
 * duplicate keys, `__proto__`) and make the proxy a second, different JSON parser.
 */
const BODIES = [
  '{not json',
  '{"amount": 10,, }',
  '{"__proto__": {"isAdmin": true}, "externalReference": "ref-1"}',
  '{"constructor": {"prototype": {"isAdmin": true}}, "amount": 1}',
  '{"amount": 1, "amount": 1000000}',
  '{"externalReference": "ref-2",   "amount" : 1.10e2 }\n',
  '\uFEFF{"bom": true}',
  '',
]

t.test('malformed JSON and __proto__ keys are forwarded byte for byte', async (t) => {
  const rig = await startRig(t)
  for (const method of ['POST', 'PATCH', 'PUT']) {
    for (const body of BODIES) {
      const label = `${method} ${JSON.stringify(body)}`
      const bytes = Buffer.from(body, 'utf8')
      rig.provider.upstreamRequests.length = 0
      const res = await send(rig, Buffer.concat([Buffer.from(request(method, '/sandbox/fiat/v1/payouts', ['Content-Type: application/json', `Content-Length: ${bytes.length}`])), bytes]))
      t.equal(res.status, 200, `${label}: forwarded`)
      const [forwarded] = rig.provider.upstreamRequests
      t.ok(forwarded?.body.equals(bytes), `${label}: identical bytes upstream`)
      t.equal(forwarded?.headers['content-type'], 'application/json', `${label}: content type unchanged`)
    }
  }
  t.equal(({} as Record<string, unknown>)['isAdmin'], undefined, 'no prototype was polluted in the proxy process')
  await assertStillServes(t, rig, 'business bodies')
})
