/**
 * The inbox's pacing while the proxy is busy (src/webhooks/intake-pacing.ts), as a table: nothing
 * is held while the proxy is idle or the rate is 0; while it is busy a burst goes at once, then one
 * event per interval; no event is held longer than the hold bound, however many arrive; a clock that
 * stepped back reads as idle. Then, as a property, over any arrivals: waits are never negative nor
 * over the bound, and while busy the events taken within any second stay within the rate and burst.
 */
import t from 'tap'
import fc from 'fast-check'
import { DEFAULT_DEADLINE_MS } from '../../src/sqlite/sqlite-thread.js'
import { createIntakePacer, FRESH_PACING, paceIntake, pacingPolicy, PACING_HOLD_MAX_MS, type PacingState } from '../../src/webhooks/intake-pacing.js'

const policy = { ratePerS: 100, burst: 3, busyWindowMs: 1_000, holdMaxMs: 2_000 }
const BUSY = 10
const IDLE = 5_000

/** Waits of events arriving at `times` (ms), the proxy's idle time each, from a fresh state. */
function waits (arrivals: ReadonlyArray<[number, number]>, p = policy): number[] {
  let state: PacingState = FRESH_PACING
  return arrivals.map(([now, idle]) => {
    const paced = paceIntake(state, now, idle, p)
    state = paced.state
    return paced.waitMs
  })
}

t.test('the table', async (t) => {
  const cases: Array<[string, ReadonlyArray<[number, number]>, number[], typeof policy?]> = [
    ['the proxy idle: nothing held, however many arrive', [[0, IDLE], [0, IDLE], [0, IDLE], [0, IDLE], [0, IDLE]], [0, 0, 0, 0, 0]],
    ['the proxy busy: a burst of 3 at once, then one every 10 ms', [[0, BUSY], [0, BUSY], [0, BUSY], [0, BUSY], [0, BUSY], [0, BUSY]], [0, 0, 0, 10, 20, 30]],
    ['events spaced at the rate are never held', [[0, BUSY], [10, BUSY], [20, BUSY], [30, BUSY], [40, BUSY]], [0, 0, 0, 0, 0]],
    ['busy means within the window: 999 ms since the last forward is busy, 1,000 is not', [[0, 999], [0, 999], [0, 999], [0, 999], [0, 1_000]], [0, 0, 0, 10, 0]],
    ['a wall clock stepped back reads as idle', [[0, BUSY], [0, BUSY], [0, BUSY], [0, -5], [0, BUSY]], [0, 0, 0, 0, 10]],
    ['a rate of 0 never holds', [[0, BUSY], [0, BUSY], [0, BUSY], [0, BUSY], [0, BUSY]], [0, 0, 0, 0, 0], { ...policy, ratePerS: 0 }],
    ['held no longer than the bound: at 1 a second the 4th event waits 2 s, and so do the next', [[0, BUSY], [0, BUSY], [0, BUSY], [0, BUSY], [0, BUSY], [0, BUSY]], [0, 0, 0, 1_000, 2_000, 2_000], { ...policy, ratePerS: 1 }],
    ['an idle spell refills the burst', [[0, BUSY], [0, BUSY], [0, BUSY], [0, BUSY], [1_000, BUSY], [1_000, BUSY], [1_000, BUSY], [1_000, BUSY]], [0, 0, 0, 10, 0, 0, 0, 10]],
  ]
  for (const [name, arrivals, expected, p] of cases) t.same(waits(arrivals, p), expected, name)
})

t.test('the policy of a rate: a tenth of a second\'s events as the burst, at least one', async (t) => {
  t.match(pacingPolicy(250), { ratePerS: 250, burst: 25, busyWindowMs: 1_000, holdMaxMs: PACING_HOLD_MAX_MS })
  t.equal(pacingPolicy(5).burst, 1)
})

t.test('over any arrivals: waits within [0, bound]; short of the bound, at most rate + burst taken in any second', async () => {
  const arrivals = fc.array(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 1, max: 40 })), { minLength: 1, maxLength: 300 })
  fc.assert(fc.property(arrivals, fc.integer({ min: 1, max: 500 }), (steps, rate) => {
    const p = pacingPolicy(rate)
    let now = 0
    let state: PacingState = FRESH_PACING
    const taken: number[] = []
    let bounded = false
    for (const [gap, count] of steps) {
      now += gap
      for (let i = 0; i < count; i++) {
        const paced = paceIntake(state, now, BUSY, p)
        state = paced.state
        if (paced.waitMs < 0 || paced.waitMs > p.holdMaxMs) return false
        if (paced.waitMs === p.holdMaxMs) bounded = true
        taken.push(now + paced.waitMs)
      }
    }
    // Held to the bound, events are taken whatever the rate (the bound wins): no rate to check then.
    if (bounded) return true
    taken.sort((a, b) => a - b)
    let from = 0
    for (let to = 0; to < taken.length; to++) {
      while ((taken[to] ?? 0) - (taken[from] ?? 0) >= 1_000) from++
      if (to - from + 1 > rate + p.burst) return false
    }
    return true
  }))
})

t.test('a held event whose store cannot take it is still answered 503 within SPEC §10\'s 5 s', async (t) => {
  t.ok(PACING_HOLD_MAX_MS + DEFAULT_DEADLINE_MS + 200 <= 5_000, `held at most ${PACING_HOLD_MAX_MS} ms, then the store's ${DEFAULT_DEADLINE_MS} ms`)
})

t.test('createIntakePacer keeps the state between events and reads the proxy\'s idle time each time', async (t) => {
  let idle = BUSY
  const pacer = createIntakePacer(policy, () => idle, () => 0)
  t.same([pacer.waitMs(), pacer.waitMs(), pacer.waitMs(), pacer.waitMs()], [0, 0, 0, 10])
  idle = IDLE
  t.equal(pacer.waitMs(), 0, 'the proxy went idle: taken at once')
})
