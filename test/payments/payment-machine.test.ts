/**
 * The payment state machine (SPEC §12) over every pair of state and input, as a table; then the
 * rules the table cannot show at a glance (who settles, what is disputed, the schedule, the due
 * time); then a property over any order of answers, events, look-ups, rechecks and time.
 */
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { applyInput, dueWork, MAX_EVENTS, type MachineContext, type PaymentInput, type Transition } from '../../src/payments/payment-machine.js'
import { isFinal, type PaymentRecord, type PaymentState } from '../../src/payments/payment-record.js'
import { context, IN_FLIGHT_MS, paymentFixture, SCHEDULE_MS, T0 } from './payment-fixture.js'

type Row = PaymentState | 'stale, no id'

const states: Record<Row, PaymentRecord> = {
  sending: paymentFixture(),
  unknown: paymentFixture({ state: 'unknown' }),
  pending: paymentFixture({ state: 'pending', transactionId: 'tx-1', transactionIdFrom: 'answer', providerStatus: 'pending' }),
  succeeded: paymentFixture({ state: 'succeeded', transactionId: 'tx-1', transactionIdFrom: 'answer', settledAtMs: T0 + 5_000, settledBy: 'lookup', nextLookupAtMs: null, dueAtMs: null }),
  failed: paymentFixture({ state: 'failed', transactionId: 'tx-1', transactionIdFrom: 'answer', settledAtMs: T0 + 5_000, settledBy: 'lookup', nextLookupAtMs: null, dueAtMs: null }),
  stale: paymentFixture({ state: 'stale', transactionId: 'tx-1', transactionIdFrom: 'answer', step: 3, nextLookupAtMs: null }),
  // Unknown until its schedule ended: the transaction may exist, its id never came.
  'stale, no id': paymentFixture({ state: 'stale', step: 3, nextLookupAtMs: null, dueAtMs: null }),
  // Read from a record whose state seal failed: what names it and its transaction id are vouched for, nothing else.
  unverified: paymentFixture({ state: 'unverified', transactionId: 'tx-1', transactionIdFrom: 'answer', nextLookupAtMs: null, dueAtMs: null, unverified: { failed: 'state seal', vouched: 'transaction' } }),
}

const event = (status: string, transactionId: string | null = 'tx-9'): PaymentInput => ({ kind: 'event', event: { id: `msg_${status}`, transactionId, status, receivedAtMs: T0 + 9_000 } })
const LATE = T0 + 25 * 3_600_000

const inputs: Record<string, { input: PaymentInput, nowMs?: number }> = {
  'answer: 2xx pending with an id': { input: { kind: 'answer', answer: { kind: 'followed', transactionId: 'tx-2', providerStatus: 'pending' } } },
  'answer: 2xx successful with an id': { input: { kind: 'answer', answer: { kind: 'followed', transactionId: 'tx-2', providerStatus: 'successful' } } },
  'answer: 2xx without an id': { input: { kind: 'answer', answer: { kind: 'untracked', reason: 'no transaction id' } } },
  'answer: 4xx': { input: { kind: 'answer', answer: { kind: 'refused', status: 400 } } },
  'answer: 5xx or none': { input: { kind: 'answer', answer: { kind: 'lost' } } },
  'answer: not forwarded': { input: { kind: 'answer', answer: { kind: 'not-forwarded' } } },
  'a later forward of the reference': { input: { kind: 'rejoin', sender: 'process-2' } },
  'event: pending': { input: event('pending') },
  'event: successful': { input: event('successful') },
  'event: failed': { input: event('failed') },
  'look-up: successful': { input: { kind: 'lookup', result: { kind: 'final', state: 'succeeded', status: 'successful' }, startedAtMs: T0 + 10_000 } },
  'look-up: failed status': { input: { kind: 'lookup', result: { kind: 'final', state: 'failed', status: 'failed' }, startedAtMs: T0 + 10_000 } },
  'look-up: pending': { input: { kind: 'lookup', result: { kind: 'pending', status: 'processing' }, startedAtMs: T0 + 10_000 } },
  'look-up: failed look-up': { input: { kind: 'lookup', result: { kind: 'failed', reason: 'HTTP 500' }, startedAtMs: T0 + 10_000 } },
  recheck: { input: { kind: 'recheck' } },
  'time: early': { input: { kind: 'time', orphaned: false } },
  'time: a day later': { input: { kind: 'time', orphaned: false }, nowMs: LATE },
  'time: its sender gone': { input: { kind: 'time', orphaned: true } },
  'notifications stored': { input: { kind: 'notified', types: ['payment.stale'] } },
}

/** The steps to log and count, where there are any (every other pair: none). */
const STEPS: Partial<Record<Row, Record<string, string[]>>> = {
  sending: {
    'answer: 2xx pending with an id': ['followed'],
    'answer: 2xx successful with an id': ['settled_at_once', 'settled'],
    'answer: 2xx without an id': ['untracked'],
    'answer: 4xx': ['dropped'],
    'answer: 5xx or none': ['unknown'],
    'answer: not forwarded': ['dropped'],
    'a later forward of the reference': ['rejoined'],
    'event: successful': ['confirming'],
    'event: failed': ['confirming'],
    recheck: ['rechecked'],
    'time: a day later': ['unknown'],
    'time: its sender gone': ['unknown'],
  },
  unknown: {
    'answer: 2xx pending with an id': ['followed'],
    'answer: 2xx successful with an id': ['settled_at_once', 'settled'],
    'a later forward of the reference': ['rejoined'],
    'event: pending': ['followed'],
    'event: successful': ['followed', 'confirming'],
    'event: failed': ['followed', 'confirming'],
    recheck: ['rechecked'],
    'time: a day later': ['stale'],
  },
  pending: {
    'answer: 2xx successful with an id': ['settled_at_once', 'settled'],
    'event: successful': ['confirming'],
    'event: failed': ['confirming'],
    'look-up: successful': ['settled'],
    'look-up: failed status': ['settled'],
    recheck: ['rechecked'],
  },
  succeeded: { 'event: failed': ['disputed'] },
  failed: { 'event: successful': ['disputed'] },
  stale: {
    'answer: 2xx successful with an id': ['settled_at_once', 'settled'],
    'event: successful': ['confirming'],
    'event: failed': ['confirming'],
    'look-up: successful': ['settled'],
    'look-up: failed status': ['settled'],
    recheck: ['rechecked'],
  },
  unverified: {
    'look-up: successful': ['resealed', 'settled'],
    'look-up: failed status': ['resealed', 'settled'],
    'look-up: pending': ['resealed'],
  },
  'stale, no id': {
    'answer: 2xx pending with an id': ['followed'],
    'answer: 2xx successful with an id': ['settled_at_once', 'settled'],
    'a later forward of the reference': ['rejoined'],
    'event: pending': ['followed'],
    'event: successful': ['followed', 'confirming'],
    'event: failed': ['followed', 'confirming'],
    'look-up: successful': ['settled'],
    'look-up: failed status': ['settled'],
    recheck: ['rechecked'],
  },
}

/** state -> input -> the state after (null: dropped), and what else must hold. */
type Expect = PaymentState | null | [PaymentState, (t: Tap, next: PaymentRecord, step: Transition['steps']) => void]
type Tap = Test

const confirming = (t: Tap, r: PaymentRecord): void => { t.equal(r.lookupNow, true, 'a look-up is wanted at once'); t.equal(r.dueAtMs, r.state === 'sending' ? T0 + IN_FLIGHT_MS : T0 + 10_000, 'due from when the event asked') }
const adopted = (t: Tap, r: PaymentRecord): void => { t.equal(r.transactionId, 'tx-9'); t.equal(r.transactionIdFrom, 'event') }
const settledBy = (by: string) => (t: Tap, r: PaymentRecord): void => { t.equal(r.settledBy, by); t.equal(r.settledAtMs, T0 + 10_000); t.same(r.notify, [`payment.${r.state}`]); t.equal(r.lookupNow, false); t.equal(r.nextLookupAtMs, null); t.equal(r.dueAtMs, 0, 'due at once: its notification') }
const disputed = (t: Tap, r: PaymentRecord, steps: Transition['steps']): void => {
  t.equal(r.events.at(-1)?.disputed, true, 'the event is marked disputed')
  t.match(steps, [{ kind: 'disputed' }])
  t.equal(r.settledAtMs, T0 + 5_000, 'the settlement is untouched')
}
const unchangedFinal = (t: Tap, r: PaymentRecord): void => { t.equal(r.settledAtMs, T0 + 5_000); t.equal(r.settledBy, 'lookup'); t.same(r.notify, []) }
/** Exactly as it was: a final record is changed by nothing but an event (listed) and a look-up (counted). */
const untouched = (t: Tap, r: PaymentRecord): void => { t.same(r, states[r.state]) }
const final = (state: 'succeeded' | 'failed'): Record<string, Expect> => ({
  'answer: 2xx pending with an id': [state, untouched],
  'answer: 2xx successful with an id': [state, untouched],
  'answer: 2xx without an id': [state, untouched],
  'answer: 4xx': [state, untouched],
  'answer: 5xx or none': [state, untouched],
  'answer: not forwarded': [state, untouched],
  'a later forward of the reference': [state, untouched],
  'event: pending': [state, (t, r) => { t.equal(r.events.at(-1)?.disputed, false); t.equal(r.transactionId, 'tx-1', 'an event never changes a settled id') }],
  'event: successful': state === 'succeeded' ? [state, (t, r) => t.equal(r.events.at(-1)?.disputed, false)] : [state, disputed],
  'event: failed': state === 'failed' ? [state, (t, r) => t.equal(r.events.at(-1)?.disputed, false)] : [state, disputed],
  'look-up: successful': [state, (t, r) => { unchangedFinal(t, r); t.equal(r.lookups.count, 1, 'counted'); t.equal(r.providerStatus, null, 'the status never changes once final') }],
  'look-up: failed status': [state, unchangedFinal],
  'look-up: pending': [state, unchangedFinal],
  'look-up: failed look-up': [state, unchangedFinal],
  recheck: [state, untouched],
  'time: early': [state, untouched],
  'time: a day later': [state, untouched],
  'time: its sender gone': [state, untouched],
  'notifications stored': [state, untouched],
})

const table: Record<Row, Record<string, Expect>> = {
  sending: {
    'answer: 2xx pending with an id': ['pending', (t, r) => { t.equal(r.transactionId, 'tx-2'); t.equal(r.transactionIdFrom, 'answer'); t.equal(r.providerStatus, 'pending'); t.equal(r.nextLookupAtMs, T0 + 60_000); t.equal(r.dueAtMs, T0 + 60_000) }],
    'answer: 2xx successful with an id': ['succeeded', settledBy('answer')],
    'answer: 2xx without an id': null,
    'answer: 4xx': null,
    'answer: 5xx or none': ['unknown', (t, r) => t.equal(r.dueAtMs, T0 + 86_400_000, 'stale after the schedule\'s last time')],
    'answer: not forwarded': null,
    'a later forward of the reference': ['sending', (t, r) => { t.equal(r.rejoined, true); t.equal(r.sender, 'process-2'); t.equal(r.sentAtMs, T0 + 10_000) }],
    'event: pending': ['sending', adopted],
    'event: successful': ['sending', (t, r) => { adopted(t, r); confirming(t, r) }],
    'event: failed': ['sending', (t, r) => { adopted(t, r); confirming(t, r) }],
    'look-up: successful': 'sending',
    'look-up: failed status': 'sending',
    'look-up: pending': 'sending',
    'look-up: failed look-up': 'sending',
    recheck: 'sending',
    'time: early': ['sending', (t, r) => t.equal(r.dueAtMs, T0 + IN_FLIGHT_MS)],
    'time: a day later': 'unknown',
    'time: its sender gone': 'unknown',
    'notifications stored': 'sending',
  },
  unknown: {
    'answer: 2xx pending with an id': ['pending', (t, r) => t.equal(r.transactionId, 'tx-2')],
    'answer: 2xx successful with an id': ['succeeded', settledBy('answer')],
    'answer: 2xx without an id': 'unknown',
    'answer: 4xx': 'unknown',
    'answer: 5xx or none': 'unknown',
    'answer: not forwarded': 'unknown',
    'a later forward of the reference': ['sending', (t, r) => t.equal(r.rejoined, true)],
    'event: pending': ['pending', adopted],
    'event: successful': ['pending', (t, r) => { adopted(t, r); confirming(t, r) }],
    'event: failed': ['pending', (t, r) => { adopted(t, r); confirming(t, r) }],
    'look-up: successful': 'unknown',
    'look-up: failed status': 'unknown',
    'look-up: pending': 'unknown',
    'look-up: failed look-up': 'unknown',
    recheck: ['unknown', (t, r) => { t.equal(r.scheduleFromMs, T0 + 10_000); t.equal(r.lookupNow, false, 'nothing to look up without an id') }],
    'time: early': 'unknown',
    'time: a day later': ['stale', (t, r) => t.same(r.notify, ['payment.stale'])],
    'time: its sender gone': 'unknown',
    'notifications stored': 'unknown',
  },
  pending: {
    'answer: 2xx pending with an id': 'pending',
    'answer: 2xx successful with an id': ['succeeded', settledBy('answer')],
    'answer: 2xx without an id': 'pending',
    'answer: 4xx': 'pending',
    'answer: 5xx or none': 'pending',
    'answer: not forwarded': 'pending',
    'a later forward of the reference': 'pending',
    'event: pending': ['pending', (t, r) => { t.equal(r.providerStatus, 'pending'); t.equal(r.transactionId, 'tx-1', 'the answer\'s id is kept') }],
    'event: successful': ['pending', (t, r) => { confirming(t, r); t.equal(r.providerStatus, 'successful', 'the last status seen') }],
    'event: failed': ['pending', confirming],
    'look-up: successful': ['succeeded', settledBy('lookup')],
    'look-up: failed status': ['failed', settledBy('lookup')],
    'look-up: pending': ['pending', (t, r) => { t.equal(r.step, 0, 'ahead of the schedule: the step is still to come'); t.equal(r.lookups.count, 1); t.equal(r.lookups.lastOutcome, 'pending'); t.equal(r.providerStatus, 'processing') }],
    'look-up: failed look-up': ['pending', (t, r) => { t.equal(r.lookups.lastOutcome, 'failed'); t.equal(r.providerStatus, 'pending', 'a failed look-up says nothing of the status') }],
    recheck: ['pending', (t, r) => { t.equal(r.lookupNow, true); t.equal(r.nextLookupAtMs, T0 + 70_000, 'the schedule counted from the recheck') }],
    'time: early': 'pending',
    'time: a day later': ['pending', (t, r) => t.equal(r.dueAtMs, T0 + 60_000, 'a step is due: a look-up, not staleness')],
    'time: its sender gone': 'pending',
    'notifications stored': 'pending',
  },
  succeeded: final('succeeded'),
  failed: final('failed'),
  stale: {
    'answer: 2xx pending with an id': 'stale',
    'answer: 2xx successful with an id': ['succeeded', settledBy('answer')],
    'answer: 2xx without an id': 'stale',
    'answer: 4xx': 'stale',
    'answer: 5xx or none': 'stale',
    'answer: not forwarded': 'stale',
    'a later forward of the reference': 'stale',
    'event: pending': 'stale',
    'event: successful': ['stale', confirming],
    'event: failed': ['stale', confirming],
    'look-up: successful': ['succeeded', settledBy('lookup')],
    'look-up: failed status': ['failed', settledBy('lookup')],
    'look-up: pending': ['stale', (t, r) => t.equal(r.dueAtMs, null, 'a stale payment waits for an event or a recheck')],
    'look-up: failed look-up': 'stale',
    recheck: ['pending', (t, r) => { t.equal(r.lookupNow, true); t.equal(r.step, 0) }],
    'time: early': 'stale',
    'time: a day later': 'stale',
    'time: its sender gone': 'stale',
    'notifications stored': 'stale',
  },
  'stale, no id': {
    'answer: 2xx pending with an id': ['pending', (t, r) => { t.equal(r.transactionId, 'tx-2'); t.equal(r.lookupNow, false) }],
    'answer: 2xx successful with an id': ['succeeded', settledBy('answer')],
    'answer: 2xx without an id': 'stale',
    'answer: 4xx': 'stale',
    'answer: 5xx or none': 'stale',
    'answer: not forwarded': 'stale',
    'a later forward of the reference': ['sending', (t, r) => t.equal(r.rejoined, true)],
    'event: pending': ['pending', adopted],
    'event: successful': ['pending', (t, r) => { adopted(t, r); confirming(t, r) }],
    'event: failed': ['pending', confirming],
    'look-up: successful': ['succeeded', settledBy('lookup')],
    'look-up: failed status': ['failed', settledBy('lookup')],
    'look-up: pending': 'stale',
    'look-up: failed look-up': 'stale',
    recheck: ['unknown', (t, r) => { t.equal(r.scheduleFromMs, T0 + 10_000); t.equal(r.dueAtMs, T0 + 10_000 + 86_400_000, 'stale again a schedule from now') }],
    'time: early': 'stale',
    'time: a day later': 'stale',
    'time: its sender gone': 'stale',
    'notifications stored': 'stale',
  },
  unverified: {
    'answer: 2xx pending with an id': ['unverified', untouched],
    'answer: 2xx successful with an id': ['unverified', untouched],
    'answer: 2xx without an id': ['unverified', untouched],
    'answer: 4xx': ['unverified', untouched],
    'answer: 5xx or none': ['unverified', untouched],
    'answer: not forwarded': ['unverified', untouched],
    'a later forward of the reference': ['unverified', untouched],
    'event: pending': ['unverified', untouched],
    'event: successful': ['unverified', untouched],
    'event: failed': ['unverified', untouched],
    'look-up: successful': ['succeeded', (t, r) => { settledBy('lookup')(t, r); t.equal(r.confirmed, true); t.equal(r.unverified, undefined, 'a sealed record again'); t.equal(r.amount, '100') }],
    'look-up: failed status': ['failed', settledBy('lookup')],
    'look-up: pending': ['pending', (t, r) => { t.equal(r.providerStatus, 'processing'); t.equal(r.unverified, undefined); t.equal(r.nextLookupAtMs, T0 + 60_000, 'on the schedule counted from its creation') }],
    'look-up: failed look-up': ['unverified', untouched],
    recheck: ['unverified', untouched],
    'time: early': ['unverified', untouched],
    'time: a day later': ['unverified', untouched],
    'time: its sender gone': ['unverified', untouched],
    'notifications stored': ['unverified', untouched],
  },
}

t.test('every state against every input', async (t) => {
  for (const [state, record] of Object.entries(states) as Array<[Row, PaymentRecord]>) {
    for (const [name, { input, nowMs }] of Object.entries(inputs)) {
      const expect = table[state][name]
      if (expect === undefined) { t.fail(`${state} × ${name} missing from the table`); continue }
      const { record: next, steps } = applyInput(record, input, context(nowMs === undefined ? {} : { nowMs }))
      t.same(steps.map((step) => step.kind), STEPS[state]?.[name] ?? [], `${state} × ${name}: steps`)
      const [after, check] = Array.isArray(expect) ? expect : [expect, null]
      if (after === null) {
        t.equal(next, null, `${state} × ${name}: dropped`)
        continue
      }
      t.equal(next?.state, after, `${state} × ${name} -> ${after}`)
      if (next !== null && check !== null) await t.test(`${state} × ${name}`, async (t) => { check(t, next, steps) })
    }
  }
  t.equal(Object.keys(inputs).length * Object.keys(states).length, 152)
})

t.test('a final event waits for a look-up: one that agrees settles it as settled by the event; one that disagrees stands, and the event is disputed', async (t) => {
  const ctx = context()
  const pending = states.pending
  const waiting = applyInput(pending, event('successful', 'tx-1'), ctx).record as PaymentRecord
  t.equal(waiting.state, 'pending', 'the event alone settles nothing')
  const agreed = applyInput(waiting, { kind: 'lookup', result: { kind: 'final', state: 'succeeded', status: 'successful' }, startedAtMs: ctx.nowMs }, ctx)
  t.match(agreed.record, { state: 'succeeded', settledBy: 'event', events: [{ id: 'msg_successful', disputed: false }] })
  t.match(agreed.steps, [{ kind: 'settled', state: 'succeeded', by: 'event', seconds: 10 }])
  const disagreed = applyInput(waiting, { kind: 'lookup', result: { kind: 'final', state: 'failed', status: 'failed' }, startedAtMs: ctx.nowMs }, ctx)
  t.match(disagreed.record, { state: 'failed', settledBy: 'lookup', providerStatus: 'failed', notify: ['payment.failed'], events: [{ id: 'msg_successful', disputed: true }] })
  t.match(disagreed.steps, [{ kind: 'settled' }, { kind: 'disputed', eventId: 'msg_successful' }])
  const stillPending = applyInput(waiting, { kind: 'lookup', result: { kind: 'pending', status: 'pending' }, startedAtMs: ctx.nowMs }, ctx).record as PaymentRecord
  t.match(stillPending, { state: 'pending', lookupNow: false, events: [{ disputed: false }] }, 'a look-up that says pending leaves the event unconfirmed')
  t.equal(stillPending.dueAtMs, T0 + 60_000, 'and the schedule goes on')
})

t.test('with confirmation by events (or no look-up path), a final event settles at once', async (t) => {
  for (const ctx of [context({ confirmByLookup: () => false })]) {
    const settled = applyInput(states.pending, event('failed', 'tx-1'), ctx)
    t.match(settled.record, { state: 'failed', settledBy: 'event', notify: ['payment.failed'] })
    t.same(settled.steps.map((s) => s.kind), ['settled'])
    t.same(applyInput(states.unknown, event('failed', 'tx-1'), ctx).steps.map((s) => s.kind), ['followed', 'settled'])
    const unknownByReference = applyInput(states.unknown, event('successful', null), ctx)
    t.match(unknownByReference.record, { state: 'succeeded', settledBy: 'event', transactionId: null })
  }
})

t.test('a repeated event changes nothing', async (t) => {
  const once = applyInput(states.pending, event('successful', 'tx-1'), context()).record as PaymentRecord
  const twice = applyInput(once, event('successful', 'tx-1'), context())
  t.same(twice.record, once)
  t.same(twice.steps, [])
})

t.test('the schedule: each step counted from creation with up to 10 % jitter, steps an outage passed are skipped, stale after the last', async (t) => {
  const answer: PaymentInput = { kind: 'answer', answer: { kind: 'followed', transactionId: 'tx-2', providerStatus: 'pending' } }
  const jittered = applyInput(states.sending, answer, context({ random: 0.999 })).record as PaymentRecord
  t.equal(jittered.nextLookupAtMs, T0 + Math.round(60_000 * 1.0999))
  let r = applyInput(states.sending, answer, context()).record as PaymentRecord
  const look = (nowMs: number, status = 'pending'): PaymentRecord => {
    t.equal(dueWork(r, context({ nowMs })), 'lookup', `a look-up is due at ${nowMs - T0} ms`)
    return applyInput(r, { kind: 'lookup', result: { kind: 'pending', status }, startedAtMs: nowMs }, context({ nowMs })).record as PaymentRecord
  }
  r = look(T0 + 60_000)
  t.match(r, { step: 1, nextLookupAtMs: T0 + 300_000, dueAtMs: T0 + 300_000 })
  // The process was down from minute 2 to hour 2: the 5-minute step is looked up once, then the next is a day.
  r = look(T0 + 7_200_000)
  t.match(r, { step: 2, nextLookupAtMs: T0 + 86_400_000 })
  r = look(T0 + 86_400_000)
  t.match(r, { state: 'stale', notify: ['payment.stale'], dueAtMs: 0 })
  t.equal(r.lookups.count, 3)
  t.equal(dueWork(r, context({ nowMs: T0 + 86_400_000 })), 'notify')
  r = applyInput(r, { kind: 'notified', types: ['payment.stale'] }, context()).record as PaymentRecord
  t.equal(r.dueAtMs, null, 'a stale payment waits')
  const again = applyInput(r, { kind: 'recheck' }, context({ nowMs: T0 + 90_000_000 })).record as PaymentRecord
  t.match(again, { state: 'pending', lookupNow: true, dueAtMs: 0, scheduleFromMs: T0 + 90_000_000, nextLookupAtMs: T0 + 90_060_000 })
})

t.test('a payment that cannot be looked up (no look-up path, or no id) goes stale at the schedule\'s last time', async (t) => {
  const ctx = context({ canLookUp: () => false })
  const pending = applyInput(states.sending, { kind: 'answer', answer: { kind: 'followed', transactionId: 'tx-2', providerStatus: null } }, ctx).record as PaymentRecord
  t.equal(pending.dueAtMs, T0 + 86_400_000)
  t.equal(applyInput(pending, { kind: 'time', orphaned: false }, context({ canLookUp: () => false, nowMs: T0 + 86_399_999 })).record?.state, 'pending')
  t.equal(applyInput(pending, { kind: 'time', orphaned: false }, context({ canLookUp: () => false, nowMs: T0 + 86_400_000 })).record?.state, 'stale')
})

t.test('a record whose transaction may exist is never dropped by a later answer', async (t) => {
  const rejoined = applyInput(states.unknown, { kind: 'rejoin', sender: 'p2' }, context()).record as PaymentRecord
  for (const answer of [{ kind: 'refused', status: 409 }, { kind: 'untracked', reason: 'no id' }, { kind: 'not-forwarded' }] as const) {
    t.equal(applyInput(rejoined, { kind: 'answer', answer }, context()).record?.state, 'unknown', `${answer.kind}: still unknown`)
  }
  const named = applyInput(states.sending, event('pending', null), context()).record as PaymentRecord
  t.equal(applyInput(named, { kind: 'answer', answer: { kind: 'refused', status: 400 } }, context()).record?.state, 'unknown', 'an event named it')
  const joinedLate = applyInput(rejoined, { kind: 'answer', answer: { kind: 'followed', transactionId: 'tx-3', providerStatus: 'pending' } }, context({ nowMs: LATE })).record as PaymentRecord
  t.match(joinedLate, { state: 'pending', id: states.unknown.id, lookupNow: true, dueAtMs: 0 }, 'the same payment, looked up once even after its schedule')
})

/** What said a payment succeeded (or failed) over a sequence, to judge where a final state came from. */
interface Said { lookup: Set<string>, event: Set<string>, answer: Set<string> }

const inputArb = fc.oneof(
  fc.record({ kind: fc.constant('answer' as const), answer: fc.oneof(
    fc.record({ kind: fc.constant('followed' as const), transactionId: fc.constantFrom('tx-1', 'tx-2'), providerStatus: fc.constantFrom('pending', 'successful', 'failed', null) }),
    fc.constantFrom({ kind: 'untracked' as const, reason: 'x' }, { kind: 'refused' as const, status: 404 }, { kind: 'lost' as const }, { kind: 'not-forwarded' as const }),
  ) }),
  fc.record({ kind: fc.constant('rejoin' as const), sender: fc.constantFrom('p1', 'p2') }),
  fc.record({ kind: fc.constant('event' as const), event: fc.record({ id: fc.constantFrom('e1', 'e2', 'e3', 'e4'), transactionId: fc.constantFrom('tx-1', null), status: fc.constantFrom('pending', 'successful', 'failed', 'reversed', null), receivedAtMs: fc.constant(T0) }) }),
  fc.record({ kind: fc.constant('lookup' as const), result: fc.oneof(
    fc.constantFrom({ kind: 'final' as const, state: 'succeeded' as const, status: 'successful' }, { kind: 'final' as const, state: 'failed' as const, status: 'failed' }),
    fc.constantFrom({ kind: 'pending' as const, status: 'pending' }, { kind: 'failed' as const, reason: 'HTTP 500' }),
  ), startedAtMs: fc.constant(0) }),
  fc.constant({ kind: 'recheck' as const }),
  fc.record({ kind: fc.constant('time' as const), orphaned: fc.boolean() }),
  fc.constant({ kind: 'notified' as const, types: ['payment.succeeded', 'payment.failed', 'payment.stale'] as const }),
)

t.test('property: in any order of inputs a final state never changes, and it is only ever what a trusted source said', async (t) => {
  fc.assert(fc.property(
    fc.array(fc.tuple(inputArb, fc.integer({ min: 0, max: 30 * 3_600_000 })), { maxLength: 40 }),
    fc.boolean(),
    fc.double({ min: 0, max: 0.999, noNaN: true }),
    (steps, confirmByEvent, random) => {
      let record: PaymentRecord | null = paymentFixture()
      let nowMs = T0
      let settled: { state: PaymentState, atMs: number | null, by: string | null } | null = null
      const notified = new Map<string, number>()
      const said: Said = { lookup: new Set(), event: new Set(), answer: new Set() }
      for (const [input, advanceMs] of steps) {
        if (record === null) break
        nowMs += advanceMs
        const ctx: MachineContext = context({ nowMs, random, confirmByLookup: () => !confirmByEvent })
        const applied = input.kind === 'lookup' ? { ...input, startedAtMs: nowMs } : input
        if (applied.kind === 'lookup' && !(record.state === 'pending' || record.state === 'stale')) continue
        if (applied.kind === 'lookup' && applied.result.kind === 'final') said.lookup.add(applied.result.state)
        if (applied.kind === 'event') said.event.add(context().classify(applied.event.status))
        if (applied.kind === 'answer' && applied.answer.kind === 'followed') said.answer.add(context().classify(applied.answer.providerStatus))
        const next: PaymentRecord | null = applyInput(record, applied, ctx).record
        if (next === null) {
          if (settled !== null || record.state !== 'sending') throw new Error(`a ${record.state} record was dropped`)
          break
        }
        for (const type of next.notify) if (!record.notify.includes(type)) notified.set(type, (notified.get(type) ?? 0) + 1)
        if (settled !== null) {
          if (next.state !== settled.state || next.settledAtMs !== settled.atMs || next.settledBy !== settled.by) throw new Error(`final ${settled.state} became ${next.state}`)
        } else if (isFinal(next.state)) {
          settled = { state: next.state, atMs: next.settledAtMs, by: next.settledBy }
          const trusted = said.lookup.has(next.state) || said.answer.has(next.state) || (confirmByEvent && said.event.has(next.state))
          if (!trusted) throw new Error(`${next.state} by ${String(next.settledBy)} without a look-up, the answer or (confirming by events) an event saying so`)
        }
        if (next.dueAtMs !== null && next.dueAtMs <= nowMs) {
          const work = dueWork(next, ctx)
          if (work === 'time' && applyInput(next, { kind: 'time', orphaned: false }, ctx).record?.state === next.state) throw new Error(`due at ${next.dueAtMs} in ${next.state} with nothing to do`)
        }
        record = next
      }
      for (const [type, times] of notified) if (times > 1 && type !== 'payment.stale') throw new Error(`${type} decided ${times} times`)
    },
  ), { numRuns: 3000 })
  t.pass('held for 3,000 sequences')
})

t.test('the in-flight time: a sending record is unknown once no forward can still be in flight', async (t) => {
  const ctx = context({ nowMs: T0 + IN_FLIGHT_MS - 1 })
  t.equal(applyInput(states.sending, { kind: 'time', orphaned: false }, ctx).record?.state, 'sending')
  const after = applyInput(states.sending, { kind: 'time', orphaned: false }, context({ nowMs: T0 + IN_FLIGHT_MS }))
  t.equal(after.record?.state, 'unknown')
  t.match(after.steps, [{ kind: 'unknown' }])
  t.equal(SCHEDULE_MS.length, 3)
})

t.test('the edges of each rule', async (t) => {
  const ctx = context()
  const apply = (r: PaymentRecord, input: PaymentInput, c: MachineContext = ctx): PaymentRecord => applyInput(r, input, c).record as PaymentRecord

  t.same(apply({ ...states.succeeded, notify: ['payment.stale', 'payment.succeeded'] }, { kind: 'notified', types: ['payment.stale'] }).notify, ['payment.succeeded'], 'only the stored notifications are crossed off')

  t.match(applyInput(states.sending, { kind: 'answer', answer: { kind: 'refused', status: 422 } }, ctx).steps, [{ kind: 'dropped', reason: 'the provider answered 422' }])
  t.match(applyInput(states.sending, { kind: 'answer', answer: { kind: 'not-forwarded' } }, ctx).steps, [{ kind: 'dropped', reason: 'not forwarded' }])
  t.match(applyInput(states.sending, { kind: 'answer', answer: { kind: 'untracked', reason: 'no id here' } }, ctx).steps, [{ kind: 'untracked', reason: 'no id here' }])
  t.equal(apply({ ...states.sending, transactionId: 'tx-by-hand' }, { kind: 'answer', answer: { kind: 'refused', status: 400 } }).state, 'pending', 'a record that holds a transaction id is never dropped')
  const named = apply(states.sending, event('pending', 'tx-9'))
  t.equal(apply(named, { kind: 'answer', answer: { kind: 'lost' } }).state, 'pending', 'no answer, but an event gave its id: pending')
  t.equal(apply(named, { kind: 'answer', answer: { kind: 'refused', status: 409 } }).state, 'pending', 'nor is it dropped by a 4xx')
  t.equal(apply({ ...states.pending, providerStatus: 'queued' }, { kind: 'answer', answer: { kind: 'followed', transactionId: 'tx-1', providerStatus: null } }).providerStatus, 'queued', 'an answer without a status keeps the last one seen')

  const twice = apply(apply(states.pending, event('pending', 'tx-1')), { kind: 'event', event: { id: 'msg_other', transactionId: 'tx-1', status: 'processing', receivedAtMs: T0 } })
  t.same(twice.events.map((e) => e.id), ['msg_pending', 'msg_other'], 'two events, both listed')
  const full = { ...states.pending, events: Array.from({ length: MAX_EVENTS - 1 }, (_, i) => ({ id: `e${i}`, status: 'pending', receivedAtMs: T0, disputed: false })) }
  const hundredth = apply(full, event('processing', 'tx-1'))
  t.equal(hundredth.events.length, MAX_EVENTS, `the ${MAX_EVENTS}th is listed`)
  const past = apply(hundredth, event('successful', 'tx-1'), context({ confirmByLookup: () => false }))
  t.equal(past.events.length, MAX_EVENTS, 'one past the bound is not listed')
  t.equal(past.state, 'succeeded', 'but it settles all the same')

  const unknownByReference = applyInput(states.unknown, event('processing', null), ctx)
  t.match(unknownByReference, { record: { state: 'unknown', transactionId: null, transactionIdFrom: null }, steps: [] }, 'an event without an id leaves it unknown')

  // Jitter drawn again at each step: the step looked up is never due again, however the next jitter falls.
  const first = apply(states.sending, { kind: 'answer', answer: { kind: 'followed', transactionId: 'tx-2', providerStatus: 'pending' } })
  const looked = apply(first, { kind: 'lookup', result: { kind: 'pending', status: 'pending' }, startedAtMs: T0 + 60_001 }, context({ nowMs: T0 + 60_001, random: 0.99 }))
  t.match(looked, { step: 1, nextLookupAtMs: T0 + Math.round(300_000 * 1.099) })
  t.match(apply(states.sending, { kind: 'answer', answer: { kind: 'followed', transactionId: 'tx-2', providerStatus: 'pending' } }, context({ nowMs: T0 + 60_000 })), { step: 1, nextLookupAtMs: T0 + 300_000 }, 'a step due this very moment is not ahead: the next one is')

  t.equal(apply(states.unknown, { kind: 'time', orphaned: false }, context({ nowMs: T0 + 86_400_000 })).state, 'stale', 'stale at the schedule\'s last time to the millisecond')
  t.equal(apply(states.unknown, { kind: 'time', orphaned: false }, context({ nowMs: T0 + 86_399_999 })).state, 'unknown')
  const noStepLeft = { ...states.pending, step: 3, nextLookupAtMs: null }
  t.equal(apply(noStepLeft, { kind: 'time', orphaned: false }).state, 'stale', 'a followed payment with no step left is stale')
  t.equal(apply({ ...noStepLeft, lookupNow: true }, { kind: 'time', orphaned: false }).state, 'pending', 'unless a look-up is wanted first')

  const mixed = { ...states.pending, events: [{ id: 'e-pending', status: 'processing', receivedAtMs: T0, disputed: false }, { id: 'e-final', status: 'successful', receivedAtMs: T0, disputed: false }] }
  const disputed = applyInput(mixed, { kind: 'lookup', result: { kind: 'final', state: 'failed', status: 'failed' }, startedAtMs: T0 }, ctx)
  t.same(disputed.record?.events.map((e) => e.disputed), [false, true], 'a pending event is never disputed')
  t.same(disputed.steps.map((s) => s.kind), ['settled', 'disputed'])

  const staleUnnotified = { ...states.stale, notify: ['payment.stale' as const], dueAtMs: 0 }
  const againStale = apply(apply(staleUnnotified, { kind: 'recheck' }), { kind: 'lookup', result: { kind: 'pending', status: 'pending' }, startedAtMs: T0 + 10_000 + 86_400_000 }, context({ nowMs: T0 + 10_000 + 86_400_000 }))
  t.equal(againStale.state, 'stale')
  t.same(againStale.notify, ['payment.stale'], 'a notification decided twice is stored once')

  t.equal(applyInput(states.unknown, { kind: 'time', orphaned: false }, context({ canLookUp: () => true })).record?.dueAtMs, T0 + 86_400_000, 'an unknown payment is due at its staleness, even where a look-up would be possible')
})

t.test('what is due of a record whose time has come', async (t) => {
  const at = T0 + 100_000
  const cases: Array<[string, PaymentRecord, string, Partial<MachineContext>?]> = [
    ['notifications to store', { ...states.succeeded, notify: ['payment.succeeded'] }, 'notify'],
    ['a step reached', states.pending, 'lookup'],
    ['a look-up wanted now', { ...states.pending, nextLookupAtMs: T0 + 900_000, lookupNow: true }, 'lookup'],
    ['a stale one wanted now', { ...states.stale, lookupNow: true }, 'lookup'],
    ['a step not yet reached', { ...states.pending, nextLookupAtMs: T0 + 900_000 }, 'time'],
    ['a stale one not wanted', states.stale, 'time'],
    ['a pending one that cannot be looked up', states.pending, 'time', { canLookUp: () => false }],
    ['sending', states.sending, 'time', { canLookUp: () => true }],
    ['unknown', { ...states.unknown, lookupNow: true }, 'time', { canLookUp: () => true }],
    ['final', { ...states.succeeded, lookupNow: true }, 'time', { canLookUp: () => true }],
  ]
  for (const [name, record, work, ctx] of cases) t.equal(dueWork(record, context({ nowMs: at, ...ctx })), work, name)
})
