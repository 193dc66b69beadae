/**
 * SPEC §12 "Look-ups asked by events", as a property over the real decisions: the state machine
 * (one event-asked look-up per step, due at the slot the pacer gives it), the due order the stores
 * claim by, which look-up is event-asked, and its share of the rate (`eventShare`), carried out by a model of
 * the worker (claims earliest due first, PROXY_PAYMENTS_LOOKUP_CONCURRENCY in flight, each GET
 * admitted by sliding windows of the rate and of the events' share). Events and scheduled look-ups
 * in any order never exceed the rate, and never starve a scheduled look-up: each is made within 10 s
 * of its due time while the schedule alone stays within the rate.
 */
import fc from 'fast-check'
import t from 'tap'
import { applyInput, dueWork, isEventAsked, type MachineContext } from '../../src/payments/payment-machine.js'
import type { PaymentRecord } from '../../src/payments/payment-record.js'
import { createEventLookupPacer } from '../../src/payments/event-lookup-pacer.js'
import { eventShare } from '../../src/payments/payments-setup.js'
import { context, paymentFixture, T0 } from './payment-fixture.js'

const RATE = 5
const WINDOW_MS = 1100
const CONCURRENCY = 2
const TICK_MS = 50
const LOOKUP_MS = 100
const STEP_MS = 5_000

interface Window { times: number[], limit: number }
const admits = (w: Window, now: number): boolean => w.times.filter((at) => at > now - WINDOW_MS).length < w.limit

function simulate (scheduled: number, flooded: number, events: Array<{ atMs: number, payment: number }>, paced = true): { madeLateMs: number[], busiest: number } {
  const pacer = createEventLookupPacer(eventShare(RATE, WINDOW_MS).limit, WINDOW_MS)
  const ctx = (nowMs: number): MachineContext => context({ nowMs, scheduleMs: [STEP_MS, 600_000], canLookUp: () => true, confirmByLookup: () => true, eventLookupAtMs: paced ? pacer.next(nowMs) : nowMs })
  let records: PaymentRecord[] = Array.from({ length: scheduled + flooded }, (_, i) => applyInput(paymentFixture({
    id: `pay_${String(i).padStart(22, '0')}`, state: 'pending', transactionId: `tx-${i}`, transactionIdFrom: 'answer', nextLookupAtMs: T0 + STEP_MS, step: 0, scheduleFromMs: T0, createdAtMs: T0,
  }), { kind: 'time', orphaned: false }, ctx(T0)).record as PaymentRecord)
  const all: Window = { times: [], limit: RATE }
  const share: Window = { times: [], limit: eventShare(RATE, WINDOW_MS).limit }
  const inFlight = new Map<number, { asker: 'event' | 'schedule', doneAt: number | null, admittedAt: number | null, scheduledDue: number | null }>()
  const madeLateMs: number[] = []
  let pendingEvents = [...events].sort((a, b) => a.atMs - b.atMs)
  for (let now = T0; now < T0 + 60_000; now += TICK_MS) {
    for (const e of pendingEvents.filter((e) => e.atMs <= now)) {
      const i = scheduled + e.payment
      const next = applyInput(records[i] as PaymentRecord, { kind: 'event', event: { id: `msg_${e.atMs}_${e.payment}`, transactionId: `tx-${i}`, status: 'successful', receivedAtMs: now } }, ctx(now)).record as PaymentRecord
      if (next.eventLookup !== null) pacer.taken(next.eventLookup.atMs)
      records[i] = next
    }
    pendingEvents = pendingEvents.filter((e) => e.atMs > now)
    for (const [i, f] of inFlight) {
      if (f.admittedAt === null) {
        if (admits(all, now) && (f.asker === 'schedule' || admits(share, now))) {
          if (f.asker === 'event') share.times.push(now)
          all.times.push(now)
          f.admittedAt = now
          f.doneAt = now + LOOKUP_MS
          if (f.scheduledDue !== null) madeLateMs.push(now - f.scheduledDue)
        }
      } else if (f.doneAt !== null && f.doneAt <= now) {
        const result = i < scheduled ? { kind: 'final', state: 'succeeded', status: 'successful' } as const : { kind: 'pending', status: 'pending' } as const
        records[i] = applyInput(records[i] as PaymentRecord, { kind: 'lookup', result, startedAtMs: f.admittedAt }, ctx(now)).record as PaymentRecord
        inFlight.delete(i)
      }
    }
    // The stores' claim: due now, earliest due first, never one in flight.
    const due = records.map((r, i) => ({ r, i })).filter(({ r, i }) => !inFlight.has(i) && r.dueAtMs !== null && r.dueAtMs <= now && dueWork(r, ctx(now)) === 'lookup')
      .sort((a, b) => (a.r.dueAtMs as number) - (b.r.dueAtMs as number))
    for (const { r, i } of due.slice(0, CONCURRENCY - inFlight.size)) {
      const scheduledDue = r.nextLookupAtMs !== null && r.nextLookupAtMs <= now ? r.nextLookupAtMs : null
      inFlight.set(i, { asker: isEventAsked(r) && scheduledDue === null ? 'event' : 'schedule', doneAt: null, admittedAt: null, scheduledDue })
    }
    records = [...records]
  }
  let busiest = 0
  for (const at of all.times) busiest = Math.max(busiest, all.times.filter((x) => x >= at && x < at + WINDOW_MS).length)
  return { madeLateMs, busiest }
}

t.test('events and scheduled look-ups in any order: never past the rate, and no scheduled look-up starved', async (t) => {
  const scenario = fc.record({
    // Up to 40 payments due at one step: what the rate makes in 10 s (5 per 1.1 s), less a margin.
    scheduled: fc.integer({ min: 1, max: 20 }),
    flooded: fc.integer({ min: 1, max: 20 }),
    events: fc.array(fc.record({ atMs: fc.integer({ min: 0, max: 20_000 }), payment: fc.nat() }), { maxLength: 400 }),
  })
  fc.assert(fc.property(scenario, ({ scheduled, flooded, events }) => {
    const { madeLateMs, busiest } = simulate(scheduled, flooded, events.map((e) => ({ atMs: T0 + e.atMs, payment: e.payment % flooded })))
    return busiest <= RATE && madeLateMs.length >= scheduled && madeLateMs.every((late) => late <= 10_000)
  }), { numRuns: 40 })
  t.pass('held for every scenario generated')
})

t.test('the flood of the outside attack (10 payouts, 22 forged events a second for 12 s; 20 due): every scheduled look-up within 10 s', async (t) => {
  const events = Array.from({ length: 22 * 12 }, (_, n) => ({ atMs: T0 + Math.floor(n * 1000 / 22), payment: n % 10 }))
  const { madeLateMs, busiest } = simulate(20, 10, events)
  t.ok(busiest <= RATE, `at most ${RATE} in any window (${busiest})`)
  t.equal(madeLateMs.filter((late) => late >= 0).length >= 20, true, 'all 20 made')
  t.ok(Math.max(...madeLateMs) <= 10_000, `the latest ${Math.max(...madeLateMs)} ms after its due time`)
})

t.test('the events\' share is at most half the rate, at one a second too', async (t) => {
  t.same(eventShare(5, 1100), { limit: 2, windowMs: 1100 })
  t.same(eventShare(2, 1100), { limit: 1, windowMs: 1100 })
  t.same(eventShare(1, 1100), { limit: 1, windowMs: 2200 })
  t.same(eventShare(1000, 1100), { limit: 500, windowMs: 1100 })
})
