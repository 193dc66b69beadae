/**
 * The one "poll until" loop of the stores: a Redis connection made in the background is waited for
 * before a store's first read (a sidecar starts anyway when Redis is down: its requests answer
 * 503), and an operator command waits for it within a bound. Checked every 20 ms.
 */

const EVERY_MS = 20

/** Resolves with the condition's last value: true as soon as it holds, false once `timeoutMs` has passed. */
export async function waitFor (condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs
  while (!condition()) {
    if (performance.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, EVERY_MS))
  }
  return true
}
