/** The bounded store's room decision (SPEC §10), table-tested: only pending and failed events count; delivered ones make room. */
import t from 'tap'
import { isFull, roomFor, type RoomDecision, type Usage } from '../../src/outbox/store-room.js'

const u = (events: number, bytes: number): Usage => ({ events, bytes })
const small = { maxEvents: 10, maxBytes: 1000 }
const large = { maxEvents: 1_000_000, maxBytes: 1024 ** 3 }

t.test('room for a new event', async (t) => {
  const cases: Array<[string, number, Usage, Usage, typeof small, RoomDecision]> = [
    ['room left: stored as is', 10, u(5, 500), u(5, 500), small, { kind: 'fits' }],
    ['the last slot and the last byte', 100, u(9, 900), u(9, 900), small, { kind: 'fits' }],
    ['an empty body in a store full of bytes', 0, u(9, 1000), u(9, 1000), small, { kind: 'fits' }],
    ['events bound reached, all pending or failed: refused', 10, u(10, 100), u(10, 100), small, { kind: 'full' }],
    ['bytes bound reached by pending and failed: refused', 101, u(9, 900), u(9, 900), small, { kind: 'full' }],
    ['one delivered event among ten: it makes room', 10, u(10, 100), u(9, 90), small, { kind: 'evict', minimum: u(1, 0), target: u(1, 0) }],
    ['a store full of delivered events: room for one', 10, u(10, 100), u(0, 0), small, { kind: 'evict', minimum: u(1, 0), target: u(1, 0) }],
    ['bytes: delivered bodies make room for a large one', 300, u(5, 900), u(2, 100), small, { kind: 'evict', minimum: u(0, 200), target: u(0, 201) }],
    ['both bounds at once', 300, u(10, 900), u(2, 100), small, { kind: 'evict', minimum: u(1, 200), target: u(1, 201) }],
    ['pending and failed plus the new one exactly at the bound: evict', 100, u(10, 1000), u(9, 900), small, { kind: 'evict', minimum: u(1, 100), target: u(1, 101) }],
    ['bounds under a thousand: no headroom, only what is needed', 10, u(999, 100), u(9, 90), { maxEvents: 999, maxBytes: 999 }, { kind: 'evict', minimum: u(1, 0), target: u(1, 0) }],
    ['large bounds: a thousandth more than needed is freed', 1000, u(1_000_000, 10_000), u(10, 100), large, { kind: 'evict', minimum: u(1, 0), target: u(1001, 0) }],
    ['large bounds, bytes: a thousandth of them too', 1024, u(10, 1024 ** 3), u(1, 1), large, { kind: 'evict', minimum: u(0, 1024), target: u(0, 1024 + Math.floor(1024 ** 3 / 1000)) }],
  ]
  for (const [name, size, total, held, bounds, expected] of cases) t.same(roomFor(size, total, held, bounds), expected, name)
})

t.test('a store is full when pending and failed events alone reach a bound', async (t) => {
  t.equal(isFull(u(9, 999), small), false)
  t.equal(isFull(u(10, 0), small), true, 'events')
  t.equal(isFull(u(0, 1000), small), true, 'bytes')
})
