/**
 * When a pending event may be attempted (SPEC §10), a pure rule both stores carry out in their claim
 * (SQLite's query with this function over its candidates; Redis's claim script) and the listing shows.
 * An event with no order key, or the earliest pending one of its key (the head), is attempted at its
 * next attempt time. A later event of the key waits behind the head, but only for
 * the order wait (the inbox's PROXY_WEBHOOK_ORDER_MAX_WAIT_SECONDS) from its own receipt: a refused `pending` must not
 * hold a payment's `successful` for a day. Past that it is attempted out of order, on its own schedule.
 */

export interface Waiting {
  receivedAtMs: number
  nextAttemptAtMs: number
  /** The head of its order key when this event waits behind it; null: no order key, or it is the head. */
  waitingBehind: string | null
}

/** Pure: the time from which the event may be attempted. */
export function attemptableAtMs (event: Waiting, orderMaxWaitMs: number): number {
  if (event.waitingBehind === null) return event.nextAttemptAtMs
  return Math.max(event.nextAttemptAtMs, event.receivedAtMs + orderMaxWaitMs)
}

/** Pure: whether an attempt at `nowMs` goes ahead of the event it waited behind. */
export function goesOutOfOrder (event: Waiting, nowMs: number, orderMaxWaitMs: number): boolean {
  return event.waitingBehind !== null && attemptableAtMs(event, orderMaxWaitMs) <= nowMs
}
