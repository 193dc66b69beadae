/** The deliverer's pure decision after an attempt (SPEC §10), table-tested. */
import t from 'tap'
import { nextStep, retryAfterMs, type AttemptAnswer } from '../../src/outbox/next-step.js'

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0)
const SCHEDULE = [5_000, 300_000, 1_800_000] // 5s, 5m, 30m: 4 attempts in all
const ok = (status: number): AttemptAnswer => ({ kind: 'status', status })

const cases: Array<{ name: string, before: number, answer: AttemptAnswer, random: number, expect: ReturnType<typeof nextStep> }> = [
  { name: 'a 200 is delivered', before: 0, answer: ok(200), random: 0, expect: { status: 'delivered' } },
  { name: 'a 204 on the last attempt is delivered', before: 3, answer: ok(204), random: 0, expect: { status: 'delivered' } },
  { name: 'a 500 on the first attempt waits the first step', before: 0, answer: ok(500), random: 0, expect: { status: 'pending', nextAttemptAtMs: NOW + 5_000 } },
  { name: 'jitter stretches a step by up to 10 %', before: 1, answer: ok(500), random: 0.999, expect: { status: 'pending', nextAttemptAtMs: NOW + Math.round(300_000 * 1.0999) } },
  { name: 'a 199 is a failed attempt', before: 0, answer: ok(199), random: 0, expect: { status: 'pending', nextAttemptAtMs: NOW + 5_000 } },
  { name: 'a 299 is delivered', before: 0, answer: ok(299), random: 0, expect: { status: 'delivered' } },
  { name: 'a 300 is a failed attempt', before: 0, answer: ok(300), random: 0, expect: { status: 'pending', nextAttemptAtMs: NOW + 5_000 } },
  { name: 'a 301 is a failed attempt (redirects are not followed)', before: 0, answer: ok(301), random: 0, expect: { status: 'pending', nextAttemptAtMs: NOW + 5_000 } },
  { name: 'a timeout is a failed attempt', before: 2, answer: { kind: 'error', reason: 'timeout' }, random: 0, expect: { status: 'pending', nextAttemptAtMs: NOW + 1_800_000 } },
  { name: 'after the last attempt the event is failed', before: 3, answer: ok(500), random: 0, expect: { status: 'failed' } },
  { name: 'a reset on the last attempt is failed', before: 3, answer: { kind: 'error', reason: 'ECONNRESET' }, random: 0, expect: { status: 'failed' } },
  { name: 'a 429 with Retry-After: 120 waits 120 s, not 5 s', before: 0, answer: { kind: 'status', status: 429, retryAfter: '120' }, random: 0, expect: { status: 'pending', nextAttemptAtMs: NOW + 120_000 } },
  { name: 'a 503 with an HTTP-date waits until then', before: 0, answer: { kind: 'status', status: 503, retryAfter: new Date(NOW + 60_000).toUTCString() }, random: 0, expect: { status: 'pending', nextAttemptAtMs: NOW + 60_000 } },
  { name: 'Retry-After is capped at the longest step', before: 0, answer: { kind: 'status', status: 429, retryAfter: '86400' }, random: 0, expect: { status: 'pending', nextAttemptAtMs: NOW + 1_800_000 } },
  { name: 'a Retry-After shorter than the step does not shorten it', before: 1, answer: { kind: 'status', status: 503, retryAfter: '1' }, random: 0, expect: { status: 'pending', nextAttemptAtMs: NOW + 300_000 } },
  { name: 'Retry-After on a 500 is not the receiver asking for time', before: 0, answer: { kind: 'status', status: 500, retryAfter: '120' }, random: 0, expect: { status: 'pending', nextAttemptAtMs: NOW + 5_000 } },
  { name: 'an unreadable Retry-After is ignored', before: 0, answer: { kind: 'status', status: 429, retryAfter: 'soon' }, random: 0, expect: { status: 'pending', nextAttemptAtMs: NOW + 5_000 } },
]

for (const c of cases) {
  t.test(c.name, async (t) => {
    t.same(nextStep(c.before, c.answer, NOW, SCHEDULE, c.random), c.expect)
  })
}

t.test('the default schedule makes 8 attempts over about 27.6 hours', async (t) => {
  const schedule = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]
  let at = NOW
  let attempts = 1
  for (;;) {
    const next = nextStep(attempts - 1, ok(500), at, schedule, 0)
    if (next.status !== 'pending') break
    at = next.nextAttemptAtMs
    attempts++
  }
  t.equal(attempts, 8)
  t.equal(Math.round((at - NOW) / 360_000) / 10, 27.6)
})

t.test('retryAfterMs reads delay-seconds and HTTP-dates only', async (t) => {
  t.equal(retryAfterMs('7', NOW), 7_000)
  t.equal(retryAfterMs(' 7 ', NOW), 7_000, 'with the spaces around a field value')
  t.equal(retryAfterMs(undefined, NOW), null)
  t.equal(retryAfterMs('-3', NOW), null)
  t.equal(retryAfterMs('1.5', NOW), null)
  t.equal(retryAfterMs(new Date(NOW - 5_000).toUTCString(), NOW), 0, 'a date in the past means now')
})
