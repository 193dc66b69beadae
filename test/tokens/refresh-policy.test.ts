import t from 'tap'
import { refreshAtMs, retrieveAgainInMs, retryDelayMs, safetyWindowMs, unusableAtMs, type RefreshSettings } from '../../src/tokens/refresh-policy.js'
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

t.test('retry waits are drawn from [T, 2T] for a failure lasting T, between the minimum and the maximum', async (t) => {
  const cases: Array<[number, number, number]> = [
    // failing for ms, random, expected ms
    [0, 0, 500], [0, 1, 1_000], [500, 0, 500], [1_000, 0, 1_000], [1_000, 0.5, 1_500], [1_000, 1, 2_000],
    [4_000, 0, 4_000], [30_000, 0, 30_000], [30_000, 1, 60_000], [100_000, 0.5, 45_000], [1e12, 0, 30_000],
  ]
  for (const [failingForMs, random, expected] of cases) {
    t.equal(retryDelayMs(failingForMs, settings, random, T0, null), expected, `failing for ${failingForMs} ms, random ${random}`)
  }
})

t.test('with jitter 0 the waits double: 0.5, 0.5, 1, 2, 4, 8 ... 30 s', async (t) => {
  const gaps: number[] = []
  for (let failingFor = 0; gaps.length < 10;) {
    const gap = retryDelayMs(failingFor, settings, 0, T0, null)
    gaps.push(gap)
    failingFor += gap
  }
  t.same(gaps, [500, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000])
})

t.test('a retry while the token is usable never waits past half of its remaining time', async (t) => {
  const g = grant(7200)
  const unusable = unusableAtMs(g)
  const cases: Array<[string, number, number, number]> = [
    // name, failing for ms, ms left before unusable, expected delay
    ['plenty of time: plain backoff', 2_000, 3_600_000, 2_000],
    ['a minute left: half of it', 100_000, 60_000, 30_000],
    ['10 s left: 5 s', 100_000, 10_000, 5_000],
    ['150 ms left: never under half of retryMin', 100_000, 150, 500],
    ['800 ms left: half of retryMin rather than 400 ms', 100_000, 800, 500],
    ['first attempt shorter than half the time left is kept', 0, 10_000, 500],
  ]
  for (const [name, failingForMs, leftMs, expected] of cases) {
    t.equal(retryDelayMs(failingForMs, settings, 0, unusable - leftMs, g), expected, name)
  }
  t.equal(retryDelayMs(100_000, settings, 0, unusable + 1, g), 30_000, 'an unusable token no longer bounds the backoff')
  t.equal(retryDelayMs(100_000, settings, 0, unusable, g), 30_000, 'nor does one that became unusable this very millisecond')
})

t.test('during an outage over the whole margin, retries probe up to the deadline without a storm', async (t) => {
  for (const random of [0, 0.5, 0.999]) {
    const g = grant(7200)
    const unusable = unusableAtMs(g)
    const attempts = [refreshAtMs(g, settings, random)]
    for (let now = attempts[0] ?? 0; now < unusable;) {
      now += retryDelayMs(now - (attempts[0] ?? 0), settings, random, now, g)
      attempts.push(now)
    }
    const before = attempts.filter((at) => at < unusable)
    const lastBefore = before[before.length - 1] ?? 0
    t.ok(unusable - lastBefore <= settings.retryMinMs, `random ${random}: last attempt ${unusable - lastBefore} ms before the deadline`)
    t.ok((attempts[attempts.length - 1] ?? 0) - unusable < settings.retryMinMs / 2, `random ${random}: the one attempt past it is under retryMin/2 late`)
    const gaps = attempts.slice(1).map((at, i) => at - (attempts[i] ?? 0))
    t.ok(Math.min(...gaps) >= settings.retryMinMs / 2, `random ${random}: never two attempts closer than retryMin/2 (closest ${Math.min(...gaps)} ms)`)
    t.ok(attempts.length <= 30, `random ${random}: ${attempts.length} attempts over a 300 s margin`)
  }
})

t.test('after the provider hands back the held token, it is asked again half-way to the end, never after it', async (t) => {
  const g = grant(7200)
  const unusable = unusableAtMs(g)
  const cases: Array<[string, number, number, number]> = [
    // name, ms left until unusable, random, expected delay
    ['300 s left: 150 s', 300_000, 0, 150_000],
    ['300 s left, jitter: up to a quarter earlier', 300_000, 1, 112_500],
    ['3 s left: 1.5 s', 3_000, 0, 1_500],
    ['1.5 s left: the 1 s minimum', 1_500, 0, 1_000],
    ['400 ms left: at the end, not after it', 400, 0, 400],
  ]
  for (const [name, leftMs, random, expected] of cases) {
    t.equal(retrieveAgainInMs(g, settings, random, unusable - leftMs), expected, name)
  }
  let now = refreshAtMs(g, settings, 0)
  let asks = 0
  while (now < unusable) { now += retrieveAgainInMs(g, settings, 0, now); asks++ }
  t.equal(now, unusable, 'the last ask is exactly at the end')
  t.ok(asks <= 12, `${asks} asks over the 300 s margin`)
})

t.test('after a short outage that outlived the token, the wait is as short as the outage', async (t) => {
  // A 10 s token whose refresh met a 1 s outage: probed ever closer to the deadline, then
  // waits drawn from [1 s, 2 s], not from the 30-60 s that the count of probes would suggest.
  const g = grant(10)
  let now = refreshAtMs(g, settings, 0)
  const start = now
  while (now < unusableAtMs(g)) now += retryDelayMs(now - start, settings, 0, now, g)
  const after = retryDelayMs(now - start, settings, 1, now, null)
  t.ok(after <= 2 * (now - start) + 1, `next wait ${after} ms after ${now - start} ms of failures`)
})
