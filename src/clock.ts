/**
 * The one seam for time. Token deadlines are kept on the monotonic clock (immune to wall-clock
 * jumps); the wall clock is only used to read the provider's `expiresAt` and `Date` header.
 * Tests that are about time pass a fake; everything else gets `systemClock`.
 */

export interface TimerHandle { unref?: () => unknown }

export interface Clock {
  /** Wall-clock milliseconds since the epoch. */
  wallMs(): number
  /** Monotonic milliseconds from an arbitrary origin. */
  monotonicMs(): number
  /** An unref'ed timer: pending timers never keep the process alive. */
  setTimeout(fn: () => void, ms: number): TimerHandle
  clearTimeout(handle: TimerHandle): void
}

/** setTimeout fires at once for delays above 2^31-1 ms, so every scheduled delay is clamped to it. */
export const MAX_TIMER_MS = 2 ** 31 - 1

export const systemClock: Clock = {
  wallMs: () => Date.now(),
  monotonicMs: () => performance.now(),
  setTimeout (fn, ms) {
    const handle = setTimeout(fn, Math.min(Math.max(0, ms), MAX_TIMER_MS))
    handle.unref()
    return handle
  },
  clearTimeout (handle) {
    clearTimeout(handle as NodeJS.Timeout)
  },
}
