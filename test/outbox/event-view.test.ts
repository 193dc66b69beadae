/** What webhooks list and show say of an event (SPEC §10), table-tested: attempts in all and this round, and the next attempt as it is. */
import t from 'tap'
import { eventView, nextAttemptCell, nextAttemptOf, type NextAttempt } from '../../src/outbox/event-view.js'
import type { EventSummary } from '../../src/outbox/outbox-store.js'

const WAIT = 900_000
const T0 = Date.UTC(2026, 10, 26, 12, 0, 0)
const iso = (ms: number): string => new Date(ms).toISOString()
const summary = (overrides: Partial<EventSummary> = {}): EventSummary => ({
  id: 'msg_e', key: 'id:evt_1', bodySha256: 'h', orderKey: 'pay_A', source: '203.0.113.7', receivedAtMs: T0, status: 'pending', attempts: 0, nextAttemptAtMs: T0,
  conflictWith: null, bytes: 10, attemptsTotal: 0, waitingBehind: null, ...overrides,
})

t.test('the next attempt, as it is', async (t) => {
  const cases: Array<[string, Partial<EventSummary>, number, NextAttempt]> = [
    ['delivered: none', { status: 'delivered' }, T0, { kind: 'none' }],
    ['failed: none', { status: 'failed', waitingBehind: 'msg_h' }, T0, { kind: 'none' }],
    ['never attempted, its key\'s head: due now, not "at its receipt"', {}, T0 + 60_000, { kind: 'due' }],
    ['a retry in the future: its time', { attempts: 1, nextAttemptAtMs: T0 + 300_000 }, T0 + 10_000, { kind: 'retry', atMs: T0 + 300_000 }],
    ['a retry whose time has come: due', { attempts: 1, nextAttemptAtMs: T0 + 300_000 }, T0 + 300_000, { kind: 'due' }],
    ['behind its key\'s head: waiting, until the order wait ends at the latest', { waitingBehind: 'msg_h' }, T0 + 60_000, { kind: 'waiting', behind: 'msg_h', byMs: T0 + WAIT }],
    ['behind its head, the wait ended: due, out of order', { waitingBehind: 'msg_h' }, T0 + WAIT, { kind: 'due' }],
    ['behind its head, the wait ended, retrying: its retry', { waitingBehind: 'msg_h', attempts: 1, nextAttemptAtMs: T0 + WAIT + 5000 }, T0 + WAIT + 1, { kind: 'retry', atMs: T0 + WAIT + 5000 }],
  ]
  for (const [name, overrides, now, expected] of cases) t.same(nextAttemptOf(summary(overrides), now, WAIT), expected, name)
})

t.test('the view: every attempt and this round\'s, the next attempt in fields and in the table\'s cell', async (t) => {
  const replayed = eventView(summary({ attempts: 1, attemptsTotal: 5, nextAttemptAtMs: T0 + 300_000 }), T0 + 1000, WAIT)
  t.match(replayed, { attempts: 5, attemptsThisRound: 1, next: 'retry', nextAttemptAt: iso(T0 + 300_000), waitingBehind: null, receivedAt: iso(T0) })
  t.equal(nextAttemptCell(replayed), iso(T0 + 300_000))
  const due = eventView(summary(), T0 + 1000, WAIT)
  t.match(due, { next: 'due', nextAttemptAt: null })
  t.equal(nextAttemptCell(due), 'now')
  const waiting = eventView(summary({ waitingBehind: 'msg_h' }), T0 + 1000, WAIT)
  t.match(waiting, { next: 'waiting', nextAttemptAt: iso(T0 + WAIT), waitingBehind: 'msg_h' })
  t.equal(nextAttemptCell(waiting), `after msg_h, by ${iso(T0 + WAIT)}`)
  t.equal(nextAttemptCell(eventView(summary({ waitingBehind: 'msg_h' }), T0 + WAIT, WAIT)), 'now (ahead of msg_h)')
  const delivered = eventView(summary({ status: 'delivered', attempts: 2, attemptsTotal: 2, waitingBehind: 'msg_h' }), T0, WAIT)
  t.match(delivered, { next: null, nextAttemptAt: null, waitingBehind: null })
  t.equal(nextAttemptCell(delivered), '-')
})
