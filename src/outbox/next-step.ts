/**
 * The deliverer's decision after an attempt (SPEC §10), a pure function of the record, the answer
 * and the clock: delivered on a 2xx; failed after the last attempt; otherwise retry after the
 * schedule's step for this attempt, stretched by up to 10 % jitter (so a backlog does not come back
 * as one burst), and never sooner than a 429's or 503's `Retry-After`, capped at the longest step.
 */
import type { Settlement } from './outbox-store.js'

export type AttemptAnswer =
  | { kind: 'status', status: number, retryAfter?: string | undefined }
  /** No answer: timeout, refused connection, reset. */
  | { kind: 'error', reason: string }

export const JITTER = 0.1

/**
 * `attemptsBefore` is the number of attempts made before this one; `random` in [0, 1).
 * The schedule's length + 1 is the number of attempts.
 */
export function nextStep (
  attemptsBefore: number,
  answer: AttemptAnswer,
  nowMs: number,
  scheduleMs: readonly number[],
  random: number,
): Settlement {
  if (answer.kind === 'status' && answer.status >= 200 && answer.status < 300) return { status: 'delivered' }
  const step = scheduleMs[attemptsBefore]
  if (step === undefined) return { status: 'failed' }
  let waitMs = step * (1 + JITTER * random)
  if (answer.kind === 'status' && (answer.status === 429 || answer.status === 503)) {
    const asked = retryAfterMs(answer.retryAfter, nowMs)
    if (asked !== null) waitMs = Math.max(waitMs, Math.min(asked, Math.max(...scheduleMs)))
  }
  return { status: 'pending', nextAttemptAtMs: nowMs + Math.round(waitMs) }
}

/** RFC 9110 §10.2.3: delay-seconds or an HTTP-date; null when absent or unreadable. */
export function retryAfterMs (value: string | undefined, nowMs: number): number | null {
  if (value === undefined) return null
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  return Number.isNaN(at) || !/[a-z]/i.test(text) ? null : Math.max(0, at - nowMs)
}
