/**
 * When the proxy last forwarded a request, kept in memory that another thread reads without a
 * message: the webhook inbox's thread paces its intake while the proxy is at work
 * (webhooks/intake-pacing.ts). The proxy's thread writes one number per answered request; asking
 * the other thread, or telling it, would wake it each time.
 *
 * The time is the wall clock's milliseconds cut to 32 bits (an Int32Array, so that Atomics keep a
 * read whole): an age is the wrapping difference of two such stamps, right while the true age is
 * under 2^31 ms (24.8 days); older reads as negative, which the pacing takes as idle, except that a
 * proxy silent for a whole multiple of 2^32 ms (49.7 days) reads as busy for one second.
 */
import type { Clock } from '../clock.js'

export interface ProxyActivity {
  /** Shared with the reading thread (workerData keeps it shared, not copied). */
  buffer: SharedArrayBuffer
  /** The proxy answered a request it forwarded. */
  forwarded: () => void
}

const stamp = (wallMs: number): number => wallMs | 0

export function createProxyActivity (clock: Clock): ProxyActivity {
  const buffer = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT)
  const view = new Int32Array(buffer)
  // Long enough ago that nothing reads as recent.
  Atomics.store(view, 0, stamp(clock.wallMs() - 2 ** 30))
  return { buffer, forwarded () { Atomics.store(view, 0, stamp(clock.wallMs())) } }
}

/** Milliseconds since the proxy last forwarded a request, as the other side of `buffer` sees it. */
export function proxyIdleMs (buffer: SharedArrayBuffer, clock: Clock): () => number {
  const view = new Int32Array(buffer)
  return () => (stamp(clock.wallMs()) - Atomics.load(view, 0)) | 0
}
