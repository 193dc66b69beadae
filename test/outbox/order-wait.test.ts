/** When a pending event may be attempted (SPEC §10: the order wait), table-tested. */
import t from 'tap'
import { attemptableAtMs, goesOutOfOrder, type Waiting } from '../../src/outbox/order-wait.js'

const WAIT = 900_000
const T0 = Date.UTC(2026, 10, 26, 12, 0, 0)

t.test('the time from which an event may be attempted', async (t) => {
  const cases: Array<[string, Waiting, number]> = [
    ['no order key, or its key\'s head, never attempted: at once', { receivedAtMs: T0, nextAttemptAtMs: T0, waitingBehind: null }, T0],
    ['a head retrying: its next attempt, however late', { receivedAtMs: T0, nextAttemptAtMs: T0 + 36_000_000, waitingBehind: null }, T0 + 36_000_000],
    ['behind its head, never attempted: the wait from its receipt', { receivedAtMs: T0, nextAttemptAtMs: T0, waitingBehind: 'msg_head' }, T0 + WAIT],
    ['behind its head, retrying after an attempt out of order: its next attempt', { receivedAtMs: T0, nextAttemptAtMs: T0 + WAIT + 300_000, waitingBehind: 'msg_head' }, T0 + WAIT + 300_000],
    ['behind a head again after a replay, its retry due before the wait ends: the wait', { receivedAtMs: T0, nextAttemptAtMs: T0 + 5_000, waitingBehind: 'msg_replayed' }, T0 + WAIT],
  ]
  for (const [name, event, expected] of cases) t.equal(attemptableAtMs(event, WAIT), expected, name)
})

t.test('an attempt goes out of order only for an event behind its head, once its wait has ended', async (t) => {
  const behind: Waiting = { receivedAtMs: T0, nextAttemptAtMs: T0, waitingBehind: 'msg_head' }
  t.equal(goesOutOfOrder(behind, T0 + WAIT - 1, WAIT), false, 'a millisecond before the wait ends')
  t.equal(goesOutOfOrder(behind, T0 + WAIT, WAIT), true, 'when it ends')
  t.equal(goesOutOfOrder({ ...behind, waitingBehind: null }, T0 + 10 * WAIT, WAIT), false, 'a head is never out of order')
  t.equal(goesOutOfOrder(behind, T0 + 1000, 1000), true, 'the wait is the setting')
})
