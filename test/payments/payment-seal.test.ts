/**
 * Sealed payment records (SPEC §12 "Sealed"), as pure functions: a record sealed on its way into
 * the store verifies; a change to any field fails the link that covers it, and the record is read
 * with only what the links before it vouch for; no seal of another record, kind or key verifies;
 * a field of the wrong shape fails without throwing.
 */
import t from 'tap'
import { deriveSealKey as approvalKey } from '../../src/approvals/approval-seal.js'
import type { PaymentRecord } from '../../src/payments/payment-record.js'
import { derivePaymentSealKey, sealPayment, unverifiedRecord, verifyPayment } from '../../src/payments/payment-seal.js'
import { paymentView } from '../../src/payments/payment-view.js'
import { paymentFixture, T0 } from './payment-fixture.js'

const SECRET = 'whsec_cGF5bWVudHMtc2VhbGluZy1rZXktb2YtdGhlLXRlc3Rz'
const key = derivePaymentSealKey(SECRET)
const pending = paymentFixture({ state: 'pending', transactionId: 'tx-1', transactionIdFrom: 'answer', providerStatus: 'pending', events: [{ id: 'msg_1', status: 'pending', receivedAtMs: T0 + 1, disputed: false }] })
const sealed = (r: PaymentRecord, k = key): PaymentRecord => ({ ...r, seals: sealPayment(k, r) })

t.test('a sealed record verifies, whatever version the store gave it', async (t) => {
  t.equal(verifyPayment(key, sealed(pending)), null)
  t.equal(verifyPayment(key, { ...sealed(pending), version: 7 }), null)
  t.equal(verifyPayment(key, sealed(paymentFixture())), null, 'one without a transaction id')
})

t.test('each field changed fails the link that covers it, and vouches for what comes before', async (t) => {
  const changes: Array<[string, Partial<PaymentRecord>, string, string]> = [
    ['the id', { id: 'pay_BBBBBBBBBBBBBBBBBBBBBB' }, 'created seal', 'nothing'],
    ['the §8 key', { key: 'k2' }, 'created seal', 'nothing'],
    ['the caller', { caller: 'agent-b' }, 'created seal', 'nothing'],
    ['the environment', { environment: 'production' }, 'created seal', 'nothing'],
    ['the interface', { interface: 'crypto' }, 'created seal', 'nothing'],
    ['the method', { method: 'PUT' }, 'created seal', 'nothing'],
    ['the path', { path: '/v1/payouts/other' }, 'created seal', 'nothing'],
    ['the reference', { externalReference: 'ref-2' }, 'created seal', 'nothing'],
    ['the amount', { amount: '99999' }, 'created seal', 'nothing'],
    ['the amount as a number', { amount: 100 as unknown as string }, 'created seal', 'nothing'],
    ['the currency', { currency: 'USD' }, 'created seal', 'nothing'],
    ['the creation time', { createdAtMs: T0 + 1 }, 'created seal', 'nothing'],
    ['the transaction id', { transactionId: 'tx-other' }, 'transaction seal', 'naming'],
    ['the transaction id removed', { transactionId: null }, 'transaction seal', 'naming'],
    ['where the transaction id came from', { transactionIdFrom: 'event' }, 'transaction seal', 'naming'],
    ['the state', { state: 'succeeded' }, 'state seal', 'transaction'],
    ['the provider\'s status', { providerStatus: 'successful' }, 'state seal', 'transaction'],
    ['what settled it', { settledBy: 'lookup' }, 'state seal', 'transaction'],
    ['when it settled', { settledAtMs: T0 }, 'state seal', 'transaction'],
    ['confirmed', { confirmed: true }, 'state seal', 'transaction'],
    ['an event\'s status', { events: [{ id: 'msg_1', status: 'successful', receivedAtMs: T0 + 1, disputed: false }] }, 'state seal', 'transaction'],
    ['an event removed', { events: [] }, 'state seal', 'transaction'],
    ['the events not a list', { events: 'x' as unknown as PaymentRecord['events'] }, 'state seal', 'transaction'],
    ['the look-ups', { lookups: { count: 3, lastAtMs: T0, lastOutcome: 'final' } }, 'state seal', 'transaction'],
    ['a notification due', { notify: ['payment.succeeded'] }, 'state seal', 'transaction'],
    ['the due time', { dueAtMs: 0 }, 'state seal', 'transaction'],
    ['the schedule', { nextLookupAtMs: null }, 'state seal', 'transaction'],
    ['a look-up wanted now', { lookupNow: true }, 'state seal', 'transaction'],
    ['the event look-up', { eventLookup: { step: 0, atMs: T0 } }, 'state seal', 'transaction'],
  ]
  for (const [name, change, failed, vouched] of changes) {
    t.same(verifyPayment(key, { ...sealed(pending), ...change }), { failed, vouched }, name)
  }
})

t.test('no other seal verifies: none, another record\'s, another key\'s, an approval\'s', async (t) => {
  t.same(verifyPayment(key, { ...pending, seals: null }), { failed: 'seals missing', vouched: 'nothing' })
  t.same(verifyPayment(key, { ...pending, seals: 'x' as unknown as PaymentRecord['seals'] }), { failed: 'seals missing', vouched: 'nothing' })
  const succeeded = sealed({ ...pending, id: 'pay_BBBBBBBBBBBBBBBBBBBBBB', state: 'succeeded', notify: ['payment.succeeded'] })
  const borrowed = { ...sealed(pending), state: 'succeeded' as const, notify: ['payment.succeeded' as const], seals: { ...sealed(pending).seals as NonNullable<PaymentRecord['seals']>, state: (succeeded.seals as NonNullable<PaymentRecord['seals']>).state } }
  t.same(verifyPayment(key, borrowed), { failed: 'state seal', vouched: 'transaction' }, 'the state seal of another payment')
  t.same(verifyPayment(key, sealed(pending, derivePaymentSealKey('whsec_YW5vdGhlci1zZWFsaW5nLWtleS1vZi10aGUtdGVzdHM='))), { failed: 'created seal', vouched: 'nothing' }, 'another sealing secret')
  t.same(verifyPayment(key, sealed(pending, approvalKey(SECRET))), { failed: 'created seal', vouched: 'nothing' }, 'the same secret under the approvals\' label')
})

t.test('a record of any shape is judged without throwing', async (t) => {
  const cyclic: Record<string, unknown> = {}
  cyclic['self'] = cyclic
  let deep: unknown = 1
  for (let i = 0; i < 100_000; i++) deep = [deep]
  for (const [name, change] of [['cyclic events', { events: cyclic }], ['a deep amount', { amount: deep }], ['a deep status', { providerStatus: deep }], ['no lookups', { lookups: null }]] as const) {
    t.not(verifyPayment(key, { ...sealed(pending), ...(change as unknown as Partial<PaymentRecord>) }), null, name)
  }
})

t.test('read as unverified: its id and reference, what the seals vouch for, null for the rest', async (t) => {
  const tampered = { ...sealed(pending), state: 'succeeded' as const, amount: '99999', notify: ['payment.succeeded' as const] }
  const nothing = unverifiedRecord(tampered, verifyPayment(key, tampered) as NonNullable<ReturnType<typeof verifyPayment>>)
  t.match(nothing, { state: 'unverified', notify: [], events: [], amount: null, caller: '', transactionId: null, unverified: { vouched: 'nothing' } })
  t.same(paymentView(nothing), {
    id: pending.id, state: 'unverified', providerStatus: null, caller: null, environment: null, interface: null, method: null, path: null,
    externalReference: 'ref-1', transactionId: null, amount: null, currency: null, createdAt: null, settledAt: null, settledBy: null, confirmed: false, events: null, lookups: null,
  })
  const stateOnly = { ...sealed(pending), state: 'succeeded' as const, notify: ['payment.succeeded' as const] }
  const vouched = unverifiedRecord(stateOnly, verifyPayment(key, stateOnly) as NonNullable<ReturnType<typeof verifyPayment>>)
  t.match(paymentView(vouched), { state: 'unverified', caller: 'anonymous', amount: '100', currency: 'KES', transactionId: 'tx-1', settledBy: null, events: null, confirmed: false })
})
