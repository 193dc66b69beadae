/**
 * The suite's one way to wait for something another process or socket does: check `condition`
 * every `everyMs` until it holds, and reject naming `what` (and `detail()`, e.g. a child's output)
 * after `timeoutMs`, so a test fails with a reason instead of hanging or passing by luck.
 * With `progress`, `timeoutMs` is how long to wait without progress rather than in all: a wait
 * for many things (every event delivered) takes several times longer on a loaded machine, and only
 * a wait that has stopped getting anywhere is a failure (issue 56 item 8).
 */
/**
 * The bound for a wait that ends on an event (a start, a reconnect, a lease's end): a loaded 2-core
 * machine takes several times as long as an idle one, and only a hang should reach it.
 */
export const HANG_MS = 60_000

export interface EventuallyOptions {
  what?: string
  timeoutMs?: number
  everyMs?: number
  /** A count that changes while the awaited thing is under way (events delivered so far). */
  progress?: () => number
  detail?: () => string
}

export async function eventually (condition: () => boolean | Promise<boolean>, options: EventuallyOptions = {}): Promise<void> {
  const { what = 'a condition', timeoutMs = 5_000, everyMs = 10, progress, detail } = options
  let deadline = performance.now() + timeoutMs
  let seen = progress?.()
  while (!await condition()) {
    const now = progress?.()
    if (now !== seen) {
      seen = now
      deadline = performance.now() + timeoutMs
    }
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms ${progress === undefined ? '' : `without progress (at ${seen}) `}waiting for ${what}${detail === undefined ? '' : `\n${detail()}`}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
