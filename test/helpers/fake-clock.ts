/**
 * A Clock for tests about time: wall and monotonic time move only when the test says so, and
 * timers fire in deadline order as time passes. Wall time can jump (NTP step) without moving the
 * monotonic clock, which is the point of keeping deadlines on the latter.
 */
import type { Clock, TimerHandle } from '../../src/clock.js'

interface Timer extends TimerHandle { at: number, fn: () => void, id: number }

export class FakeClock implements Clock {
  #mono = 1_000_000
  #wall: number
  #timers: Timer[] = []
  #nextId = 0

  constructor (wallMs = Date.UTC(2026, 10, 22, 12, 0, 0)) {
    this.#wall = wallMs
  }

  wallMs (): number { return this.#wall }
  monotonicMs (): number { return this.#mono }

  setTimeout (fn: () => void, ms: number): TimerHandle {
    const timer: Timer = { at: this.#mono + Math.max(0, ms), fn, id: this.#nextId++ }
    this.#timers.push(timer)
    return timer
  }

  clearTimeout (handle: TimerHandle): void {
    this.#timers = this.#timers.filter((t) => t !== handle)
  }

  /** Number of timers waiting. */
  get pending (): number { return this.#timers.length }

  /** Moves both clocks forward, firing due timers in order, letting promises settle in between. */
  async advance (ms: number): Promise<void> {
    const end = this.#mono + ms
    for (;;) {
      this.#timers.sort((a, b) => a.at - b.at || a.id - b.id)
      const next = this.#timers[0]
      if (next === undefined || next.at > end) break
      this.#timers.shift()
      this.#wall += next.at - this.#mono
      this.#mono = next.at
      next.fn()
      await settle()
    }
    this.#wall += end - this.#mono
    this.#mono = end
    await settle()
  }

  /** A wall-clock step that the monotonic clock does not see. */
  jumpWall (ms: number): void { this.#wall += ms }
}

/** Lets pending promise chains and I/O callbacks run. */
export async function settle (): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
}
