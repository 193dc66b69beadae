/**
 * Room for a new event in a bounded store (SPEC §10), a pure decision both stores carry out (SQLite
 * in its transaction, Redis in its intake script, redis-lua.ts). Only pending and failed events
 * count against the bounds: delivered ones are removed, oldest first, to make room, so a store full
 * of delivered events never refuses; a new event is refused only when pending and failed events alone
 * leave no room for it, and nothing pending or failed is ever removed.
 *
 * A store that has to evict frees a little more than the new event needs (a thousandth of each
 * bound), so a store that stays full evicts in batches: one warn line and one delete per batch, not
 * one per event. Its keys leave the duplicate window that much earlier, which is what the bound costs.
 */

export interface Usage { events: number, bytes: number }
export interface StoreBounds { maxEvents: number, maxBytes: number }

export type RoomDecision =
  | { kind: 'fits' }
  /** Pending and failed events alone leave no room: refused (503), nothing removed. */
  | { kind: 'full' }
  /**
   * Remove delivered events, oldest first, until `target` is freed or none is left; the event is
   * stored when at least `minimum` was freed (always, when `held` is true to the store).
   */
  | { kind: 'evict', minimum: Usage, target: Usage }

export const EVICTION_HEADROOM = 0.001

/** How much more than the new event needs an eviction frees, for bounds `bounds`. */
export function headroomOf (bounds: StoreBounds): Usage {
  return {
    events: Math.floor(bounds.maxEvents * EVICTION_HEADROOM),
    bytes: Math.floor(bounds.maxBytes * EVICTION_HEADROOM),
  }
}

/** Pure. `total`: every stored event; `held`: the pending and failed ones among them; `size`: the new body's bytes. */
export function roomFor (size: number, total: Usage, held: Usage, bounds: StoreBounds): RoomDecision {
  if (total.events + 1 <= bounds.maxEvents && total.bytes + size <= bounds.maxBytes) return { kind: 'fits' }
  if (held.events + 1 > bounds.maxEvents || held.bytes + size > bounds.maxBytes) return { kind: 'full' }
  const headroom = headroomOf(bounds)
  const minimum = {
    events: Math.max(0, total.events + 1 - bounds.maxEvents),
    bytes: Math.max(0, total.bytes + size - bounds.maxBytes),
  }
  const target = {
    events: Math.max(0, total.events + 1 - (bounds.maxEvents - headroom.events)),
    bytes: Math.max(0, total.bytes + size - (bounds.maxBytes - headroom.bytes)),
  }
  return { kind: 'evict', minimum, target }
}

/**
 * Whether pending and failed events alone fill the store: no new event is taken until some are delivered or removed.
 */
export function isFull (held: Usage, bounds: StoreBounds): boolean {
  return held.events >= bounds.maxEvents || held.bytes >= bounds.maxBytes
}
