/**
 * The seals of an approval record (SPEC §11 "Sealed records"), table-tested: each step's seal over
 * its fields, chained to the step before; every field that decides what is sent or shown, each
 * step's fields, the stage and the key can each make a record fail; a record in a state its chain
 * does not allow fails too.
 */
import t from 'tap'
import type { ApprovalRecord, ForwardState } from '../../src/approvals/approval-record.js'
import { deriveSealKey, sealDecision, sealFailure, sealHold, sealStage } from '../../src/approvals/approval-seal.js'

const SECRET = `whsec_${Buffer.from('approval sealing secret, 32 byte').toString('base64')}`
const KEY = deriveSealKey(SECRET)

const unsealed = {
  id: 'apr_1',
  key: 'k'.repeat(64),
  fingerprint: 'f'.repeat(64),
  status: 'pending' as const,
  caller: 'payout-agent',
  environment: 'sandbox',
  interface: 'fiat',
  method: 'POST',
  path: '/payouts',
  upstreamUrl: 'https://api.example/api/sandbox/b2b',
  query: 'a=1',
  headers: { 'content-type': 'application/json', 'x-b': ['1', '2'] },
  body: Buffer.from('{"amount":"500","currency":"KES"}'),
  amount: '500',
  currency: 'KES',
  externalReference: 'ref-1',
  createdAtMs: 1_000,
  expiresAtMs: 2_000,
  reservations: [{ key: 'day:payout-agent:0:KES:0', units: '50000000000' }],
  decidedBy: null,
  decidedByCaller: null,
  reason: null,
  decidedAtMs: null,
  forward: 'none' as ForwardState,
  decisionSeal: null,
  forwardSeal: null,
}
const pending: ApprovalRecord = { ...unsealed, holdSeal: sealHold(KEY, unsealed) }
const decision = { status: 'approved' as const, by: 'ann@example.com', byCaller: 'ops', reason: 'checked', atMs: 1_500 }
const approved: ApprovalRecord = { ...pending, status: 'approved', decidedBy: decision.by, decidedByCaller: decision.byCaller, reason: decision.reason, decidedAtMs: decision.atMs, decisionSeal: sealDecision(KEY, pending.holdSeal, decision) }
const staged = (record: ApprovalRecord, stage: ForwardState): ApprovalRecord => ({ ...record, forward: stage, forwardSeal: sealStage(KEY, record.decisionSeal ?? '', stage) })

t.test('the key and the seals are the same in every release, so records sealed before an upgrade still verify', async (t) => {
  t.equal(KEY.toString('hex'), '538b942811616d976023cb81f6b8f36010caf1d011d6ebab5fab0d99905311a8')
  t.equal(pending.holdSeal, 'v_mpgXqAIlLa6FfqoCpdmrBxFClw36vrz47xgN9dmSs', 'an HMAC-SHA256, base64url, of the same covered values')
})

t.test('the key is derived from the bytes after whsec_', async (t) => {
  t.same(deriveSealKey(SECRET.slice('whsec_'.length)), KEY, 'the same secret without its prefix')
  t.notSame(deriveSealKey(`whsec_${Buffer.from('another secret').toString('base64')}`), KEY)
  t.notSame(deriveSealKey('AAAAwhsec_'), deriveSealKey('AAAA'), 'whsec_ is a prefix only at the start')
})

t.test('a record verifies in each state its chain allows', async (t) => {
  const rejected = { ...pending, status: 'rejected' as const, decidedBy: 'bob', decidedByCaller: 'cli', reason: 'no', decidedAtMs: 1_600 }
  const sealedRejected = { ...rejected, decisionSeal: sealDecision(KEY, pending.holdSeal, { status: 'rejected', by: 'bob', byCaller: 'cli', reason: 'no', atMs: 1_600 }) }
  const expired = { ...pending, status: 'expired' as const, decidedAtMs: 2_000 }
  const sealedExpired = { ...expired, decisionSeal: sealDecision(KEY, pending.holdSeal, { status: 'expired', by: null, byCaller: null, reason: null, atMs: 2_000 }) }
  const cases: Array<[string, ApprovalRecord]> = [
    ['pending', pending],
    ['approved, not yet forwarded', approved],
    ['approved, sending', staged(approved, 'sending')],
    ['approved, answered', staged(approved, 'answered')],
    ['rejected', sealedRejected],
    ['rejected, amounts given back', staged(sealedRejected, 'answered')],
    ['expired, amounts given back', staged(sealedExpired, 'answered')],
  ]
  for (const [name, record] of cases) t.equal(sealFailure(KEY, record), null, name)
})

t.test('a change to any field the hold covers fails the hold seal', async (t) => {
  const changes: Array<[string, Partial<ApprovalRecord>]> = [
    ['id', { id: 'apr_2' }], ['key', { key: 'x'.repeat(64) }], ['fingerprint', { fingerprint: 'e'.repeat(64) }], ['caller', { caller: 'other' }],
    ['environment', { environment: 'production' }], ['interface', { interface: 'crypto' }], ['upstreamUrl', { upstreamUrl: 'https://evil.example/api/sandbox/b2b' }],
    ['method', { method: 'PUT' }], ['path', { path: '/payouts/x' }], ['query', { query: 'amount=99999' }],
    ['a header added', { headers: { ...unsealed.headers, 'x-extra': '1' } }], ['a header value', { headers: { ...unsealed.headers, 'content-type': 'text/plain' } }],
    ['a repeated header value', { headers: { ...unsealed.headers, 'x-b': ['1'] } }],
    ['body', { body: Buffer.from('{"amount":"900","currency":"KES"}') }], ['amount', { amount: '5' }], ['currency', { currency: 'USD' }],
    ['externalReference', { externalReference: 'ref-2' }], ['createdAtMs', { createdAtMs: 1_001 }], ['expiresAtMs', { expiresAtMs: 999_999 }],
    ['a reservation removed', { reservations: [] }], ['a reservation\'s units', { reservations: [{ key: 'day:payout-agent:0:KES:0', units: '1' }] }],
    ['a reservation\'s key', { reservations: [{ key: 'day:other:0:KES:0', units: '50000000000' }] }],
  ]
  for (const [field, change] of changes) {
    t.equal(sealFailure(KEY, { ...pending, ...change }), 'hold seal', `${field} changed, pending`)
    t.equal(sealFailure(KEY, { ...staged(approved, 'sending'), ...change }), 'hold seal', `${field} changed, being sent`)
  }
  t.equal(sealFailure(KEY, { ...pending, headers: { 'x-b': ['1', '2'], 'content-type': 'application/json' } }), null, 'header order is not a change: a store may serialise it either way')
})

t.test('a decision, a stage or a state its chain does not allow fails', async (t) => {
  const cases: Array<[string, ApprovalRecord, string]> = [
    ['no hold seal (held before seals existed)', { ...pending, holdSeal: undefined as unknown as string }, 'hold seal missing'],
    ['a hold seal one character off', { ...pending, holdSeal: `${pending.holdSeal.slice(0, -1)}${pending.holdSeal.endsWith('A') ? 'B' : 'A'}` }, 'hold seal'],
    ['a cut hold seal', { ...pending, holdSeal: pending.holdSeal.slice(0, -1) }, 'hold seal'],
    ['approved by hand (no decision seal)', { ...pending, status: 'approved', decidedBy: 'mallory', decidedAtMs: 1_500 }, 'decision seal'],
    ['who decided changed', { ...approved, decidedBy: 'mallory' }, 'decision seal'],
    ['the deciding caller changed', { ...approved, decidedByCaller: 'cli' }, 'decision seal'],
    ['the reason changed', { ...approved, reason: 'other' }, 'decision seal'],
    ['the decision time changed', { ...approved, decidedAtMs: 1_501 }, 'decision seal'],
    ['a rejection turned into an approval', { ...approved, status: 'rejected' }, 'decision seal'],
    ['another record\'s decision seal', { ...approved, decisionSeal: sealDecision(KEY, 'another hold seal', decision) }, 'decision seal'],
    ['a pending record with a stage', { ...pending, forward: 'sending' }, 'stage of a pending record'],
    ['a pending record with a decision seal', { ...pending, decisionSeal: approved.decisionSeal }, 'stage of a pending record'],
    ['a stage moved on without a seal', { ...approved, forward: 'sending' }, 'stage seal'],
    ['a stage with another stage\'s seal', { ...staged(approved, 'answered'), forward: 'sending' }, 'stage seal'],
    ['an unforwarded record with a stage seal', { ...staged(approved, 'answered'), forward: 'none' }, 'stage seal of an unforwarded record'],
    ['a rejected record being sent', { ...staged(approved, 'sending'), status: 'rejected', decisionSeal: sealDecision(KEY, pending.holdSeal, { ...decision, status: 'rejected' }) }, 'stage of an unapproved record'],
  ]
  for (const [name, record, failure] of cases) t.equal(sealFailure(KEY, record), failure, name)
})

t.test('under another key nothing verifies', async (t) => {
  const other = deriveSealKey(`whsec_${Buffer.from('another sealing secret, 32 bytes').toString('base64')}`)
  for (const record of [pending, approved, staged(approved, 'answered')]) t.equal(sealFailure(other, record), 'hold seal')
  t.equal(sealFailure(KEY, { ...approved, decisionSeal: sealDecision(other, pending.holdSeal, decision) }), 'decision seal')
  t.equal(sealFailure(KEY, { ...approved, forward: 'sending', forwardSeal: sealStage(other, approved.decisionSeal ?? '', 'sending') }), 'stage seal')
})
