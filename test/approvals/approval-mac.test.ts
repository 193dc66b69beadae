/**
 * The approved record's MAC (SPEC §11), table-tested: the forwarder sends only a record it accepts,
 * so each field it covers, the status and the key must each be able to refuse a record.
 */
import t from 'tap'
import { approvalMac, deriveMacKey, hasValidMac } from '../../src/approvals/approval-mac.js'
import type { ApprovalRecord } from '../../src/approvals/approval-record.js'

const SECRET = `whsec_${Buffer.from('approval signing secret, 32 byte').toString('base64')}`
const KEY = deriveMacKey(SECRET)

const decided: ApprovalRecord = {
  id: 'apr_1',
  key: 'k'.repeat(64),
  fingerprint: 'f'.repeat(64),
  status: 'approved',
  caller: 'payout-agent',
  environment: 'sandbox',
  interface: 'fiat',
  method: 'POST',
  path: '/payouts',
  upstreamUrl: 'https://api.example/v1',
  query: '?a=1',
  headers: { 'content-type': 'application/json' },
  body: Buffer.from('{"amount":"500","currency":"KES"}'),
  amount: '500',
  currency: 'KES',
  externalReference: 'ref-1',
  createdAtMs: 1_000,
  expiresAtMs: 2_000,
  reservations: [],
  decidedBy: 'ann@example.com',
  decidedByCaller: 'ops',
  reason: null,
  decidedAtMs: 1_500,
  mac: null,
  forward: 'none',
}
const sealed: ApprovalRecord = { ...decided, mac: approvalMac(KEY, decided) }

t.test('the key and the MAC are the same in every release, so records approved before an upgrade are still sent', async (t) => {
  t.equal(KEY.toString('hex'), 'b63221753da35f5e8f13556460dc1d10f77e9e3614487de35f87c9a65673d85b')
  t.equal(sealed.mac, 'i2WfCOGMoyAizi8zVNEZ7lf8m1V2ScQQQJFgPwj2Nis')
})

t.test('the key is derived from the bytes after whsec_, as the Standard Webhooks libraries read the secret', async (t) => {
  t.same(deriveMacKey(SECRET.slice('whsec_'.length)), KEY, 'the same secret without its prefix')
  t.notSame(deriveMacKey(`whsec_${Buffer.from('another secret').toString('base64')}`), KEY)
  t.notSame(deriveMacKey('AAAAwhsec_'), deriveMacKey('AAAA'), 'whsec_ is a prefix only at the start')
})

t.test('hasValidMac accepts the sealed record and refuses any change to what the MAC covers', async (t) => {
  t.equal(hasValidMac(KEY, sealed), true)
  const changes: Array<[string, Partial<ApprovalRecord>]> = [
    ['id', { id: 'apr_2' }],
    ['key', { key: 'x'.repeat(64) }],
    ['fingerprint', { fingerprint: 'e'.repeat(64) }],
    ['caller', { caller: 'other' }],
    ['method', { method: 'PUT' }],
    ['upstreamUrl', { upstreamUrl: 'https://evil.example/v1' }],
    ['path', { path: '/transfers' }],
    ['query', { query: '?a=2' }],
    ['headers', { headers: { 'content-type': 'text/plain' } }],
    ['body', { body: Buffer.from('{"amount":"50000","currency":"KES"}') }],
    ['decidedBy', { decidedBy: 'bob@example.com' }],
    ['decidedByCaller', { decidedByCaller: 'cli' }],
    ['decidedAtMs', { decidedAtMs: 1_501 }],
  ]
  for (const [field, change] of changes) t.equal(hasValidMac(KEY, { ...sealed, ...change }), false, `${field} changed`)
})

t.test('hasValidMac refuses a record that is not approved, has no MAC, a wrong or cut MAC, or another key', async (t) => {
  const mac = sealed.mac ?? ''
  const flipped = `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`
  const cases: Array<[string, ApprovalRecord, Buffer?]> = [
    ['rejected, with the right MAC', { ...sealed, status: 'rejected' }],
    ['pending, with the right MAC', { ...sealed, status: 'pending' }],
    ['approved without a MAC', { ...sealed, mac: null }],
    ['an empty MAC', { ...sealed, mac: '' }],
    ['one character changed', { ...sealed, mac: flipped }],
    ['one character short', { ...sealed, mac: mac.slice(0, -1) }],
    ['one character more', { ...sealed, mac: `${mac}A` }],
    ['under another key', sealed, deriveMacKey(`whsec_${Buffer.from('another secret').toString('base64')}`)],
  ]
  for (const [name, record, key] of cases) t.equal(hasValidMac(key ?? KEY, record), false, name)
})
