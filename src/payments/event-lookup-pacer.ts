/**
 * When a look-up an event asks for falls due (SPEC §12 "Look-ups asked by events"): each is given
 * the next free slot at the events' share of the rate, so a flood of events for many payments lays
 * its look-ups out ahead in time instead of all at once, and a scheduled look-up due now always
 * sorts before them in the stores' due order (a slot held ahead must not hold a place in the queue).
 * The share's own window still bounds what is sent; this only orders. Per process: replicas each
 * lay out their own, and the shared window bounds them together.
 */
export interface EventLookupPacer {
  /** The earliest an event-asked look-up asked at `nowMs` may be due. */
  next: (nowMs: number) => number
  /** A look-up was given `atMs`: the next one goes after it. */
  taken: (atMs: number) => void
}

export function createEventLookupPacer (perSecond: number, windowMs: number): EventLookupPacer {
  const intervalMs = windowMs / perSecond
  let last = Number.NEGATIVE_INFINITY
  return {
    next: (nowMs) => Math.max(nowMs, Math.ceil(last + intervalMs)),
    taken (atMs) { last = Math.max(last, atMs) },
  }
}
