import t from 'tap'
import { refreshAtMs, retryDelayMs, safetyWindowMs, unusableAtMs, type RefreshSettings } from '../../src/tokens/refresh-policy.js'
import type { TokenGrant } from '../../src/tokens/token-grant.js'

const T0 = 1_000_000
const settings: RefreshSettings = { refreshMarginMs: 300_000, retryMinMs: 1_000, retryMaxMs: 60_000 }

function grant (lifetimeS: number): TokenGrant {
  return { token: 'x', expiresAt: 0, lifetimeS, obtainedAtMs: T0, expiresAtMs: T0 + lifetimeS * 1000 }
}

t.test('the safety window is 2 s, or 5 % of a short lifetime', async (t) => {
  const cases: Array<[number, number]> = [[7200, 2_000], [3600, 2_000], [40, 2_000], [10, 500], [1, 50]]
  for (const [lifetimeS, windowMs] of cases) {
    t.equal(safetyWindowMs(grant(lifetimeS)), windowMs, `${lifetimeS} s`)
    t.equal(unusableAtMs(grant(lifetimeS)), T0 + lifetimeS * 1000 - windowMs, `${lifetimeS} s unusable`)
  }
})

t.test('refresh happens the margin before expiry, jittered earlier, at most half-way for short tokens', async (t) => {
  const cases: Array<[string, number, Partial<RefreshSettings>, number, number]> = [
    // name, lifetime s, settings, random, expected refresh time after T0 (ms)
    ['2 h, default margin, no jitter', 7200, {}, 0, 6_900_000],
    ['2 h, jitter a quarter of the margin, capped at a minute', 7200, {}, 0.5, 6_900_000 - 30_000],
    ['1 h, no jitter', 3600, {}, 0, 3_300_000],
    ['1 h, jitter near 1', 3600, {}, 0.999, 3_300_000 - 59_940],
    ['10 min: the margin is half the lifetime', 600, {}, 0, 300_000],
    ['10 s: half-way', 10, {}, 0, 5_000],
    ['10 s: jitter a quarter of the clamped margin', 10, {}, 1, 3_750],
    ['2 h, 60 s margin, jitter 15 s at most', 7200, { refreshMarginMs: 60_000 }, 1, 7_200_000 - 75_000],
  ]
  for (const [name, lifetimeS, overrides, random, expected] of cases) {
    t.equal(refreshAtMs(grant(lifetimeS), { ...settings, ...overrides }, random), T0 + expected, name)
  }
})

t.test('refresh is due before the token stops being handed out, even with a tiny margin', async (t) => {
  for (const marginMs of [0, 500, 1_000, 1_999]) {
    for (const lifetimeS of [7200, 10, 3]) {
      const g = grant(lifetimeS)
      const at = refreshAtMs(g, { ...settings, refreshMarginMs: marginMs }, 0)
      t.ok(at < unusableAtMs(g), `margin ${marginMs} ms, lifetime ${lifetimeS} s: refresh at ${at - T0} < unusable at ${unusableAtMs(g) - T0}`)
      t.ok(at >= g.obtainedAtMs, `margin ${marginMs} ms, lifetime ${lifetimeS} s: not before it was obtained`)
    }
  }
})

t.test('retry delays grow exponentially with jitter in [d/2, d] up to the maximum', async (t) => {
  const cases: Array<[number, number, number]> = [
    // attempt, random, expected ms
    [0, 0, 500], [0, 1, 1_000], [1, 0, 1_000], [1, 0.5, 1_500], [2, 0, 2_000], [5, 0, 16_000],
    [6, 0, 30_000], [6, 1, 60_000], [7, 0.5, 45_000], [100, 1, 60_000], [1e9, 0, 30_000],
  ]
  for (const [attempt, random, expected] of cases) {
    t.equal(retryDelayMs(attempt, settings, random, T0, null), expected, `attempt ${attempt}, random ${random}`)
  }
})

t.test('a retry while the token is usable never waits past half of its remaining time', async (t) => {
  const g = grant(7200)
  const unusable = unusableAtMs(g)
  const cases: Array<[string, number, number, number]> = [
    // name, attempt, now (ms before unusable), expected delay
    ['plenty of time: plain backoff', 3, 3_600_000, 4_000],
    ['a minute left: half of it', 10, 60_000, 30_000],
    ['10 s left: 5 s', 10, 10_000, 5_000],
    ['150 ms left: the 100 ms floor', 10, 150, 100],
    ['first attempt shorter than half the time left is kept', 0, 10_000, 500],
  ]
  for (const [name, attempt, leftMs, expected] of cases) {
    t.equal(retryDelayMs(attempt, settings, 0, unusable - leftMs, g), expected, name)
  }
  t.equal(retryDelayMs(10, settings, 0, unusable + 1, g), 30_000, 'an unusable token no longer bounds the backoff')
})

t.test('during an outage over the whole margin, retries probe up to the deadline without a storm', async (t) => {
  for (const random of [0, 0.5, 0.999]) {
    const g = grant(7200)
    const unusable = unusableAtMs(g)
    const attempts = [refreshAtMs(g, settings, random)]
    for (let now = attempts[0] ?? 0; now < unusable;) {
      now += retryDelayMs(attempts.length - 1, settings, random, now, g)
      attempts.push(now)
    }
    const before = attempts.filter((at) => at < unusable)
    const lastBefore = before[before.length - 1] ?? 0
    t.ok(unusable - lastBefore <= 200, `random ${random}: last attempt ${unusable - lastBefore} ms before the deadline`)
    t.ok((attempts[attempts.length - 1] ?? 0) - unusable < 100, `random ${random}: the one attempt past it is under 100 ms late`)
    t.ok(attempts.length <= 30, `random ${random}: ${attempts.length} attempts over a 300 s margin`)
  }
})
