/**
 * Drives a FakeClock for tests whose token requests are real HTTP round trips to the fake
 * provider. FakeClock.advance() would jump past a deadline while a token request is still on the
 * wire, so the driver moves fake time from one timer deadline to the next and waits (in real
 * time) for every in-flight token request to finish in between: each token request then happens
 * at exactly the fake instant its timer fired, and schedules measured on fake time are exact.
 * In-flight token requests are read from the proxy's own `token_requests_in_flight` gauge. The
 * driver also records the longest delay the proxy ever asked a timer for.
 */
import type { Clock, TimerHandle } from '../../src/clock.js'
import { eventually } from '../helpers/eventually.js'
import { FakeClock } from '../helpers/fake-clock.js'

/** Real time a token round trip to the local fake provider may take before the test gives up. */
const IDLE_TIMEOUT_MS = 5_000
/** A runaway schedule (a timer re-armed at 0 ms for ever) fails the test instead of hanging it. */
const MAX_TIMERS_PER_ADVANCE = 10_000

export class TimeDriver implements Clock {
  readonly fake: FakeClock
  /** Longest delay ever passed to setTimeout. */
  maxTimerMs = 0
  readonly #deadlines = new Map<TimerHandle, number>()
  #inflight: () => Promise<number> = async () => 0

  constructor (fake = new FakeClock()) {
    this.fake = fake
  }

  /** Tells the driver how to read the number of token requests in flight. */
  watch (inflight: () => Promise<number>): void {
    this.#inflight = inflight
  }

  wallMs (): number { return this.fake.wallMs() }
  monotonicMs (): number { return this.fake.monotonicMs() }

  setTimeout (fn: () => void, ms: number): TimerHandle {
    this.maxTimerMs = Math.max(this.maxTimerMs, ms)
    const handle = this.fake.setTimeout(() => {
      this.#deadlines.delete(handle)
      fn()
    }, ms)
    this.#deadlines.set(handle, this.fake.monotonicMs() + Math.max(0, ms))
    return handle
  }

  clearTimeout (handle: TimerHandle): void {
    this.#deadlines.delete(handle)
    this.fake.clearTimeout(handle)
  }

  /** Moves fake time forward by `ms`, one timer at a time, letting each token request complete. */
  async advance (ms: number): Promise<void> {
    const end = this.monotonicMs() + ms
    for (let fired = 0; ; fired++) {
      if (fired > MAX_TIMERS_PER_ADVANCE) throw new Error('timers keep firing: runaway schedule')
      await this.idle()
      const next = Math.min(...this.#deadlines.values())
      if (!(next <= end)) break
      await this.fake.advance(Math.max(0, next - this.monotonicMs()))
    }
    await this.fake.advance(end - this.monotonicMs())
    await this.idle()
  }

  /** Advances to an absolute monotonic time. */
  async advanceTo (monoMs: number): Promise<void> {
    await this.advance(Math.max(0, monoMs - this.monotonicMs()))
  }

  /** Waits in real time until no token request is in flight. */
  async idle (): Promise<void> {
    await eventually(async () => await this.#inflight() === 0, { what: 'the token requests in flight to finish', timeoutMs: IDLE_TIMEOUT_MS, everyMs: 1 })
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve))
  }
}
