/**
 * What a listing and a single event's view say of an outbox event (`webhooks list` and `webhooks show`,
 * SPEC §10), a pure function of its summary, the time and the order wait, so that both say the same. Attempts: every
 * attempt recorded (what `show` lists one by one) and those of the current round (since the event was stored or last
 * replayed: what the retry schedule counts). The next attempt is what is true now: due (attempted as
 * soon as a delivery slot is free, or in flight), a retry at a time, waiting behind an earlier event
 * of its order key (until that one is settled, or the order wait ends at the latest), or none.
 */
import type { EventSummary } from './outbox-store.js'
import { attemptableAtMs } from './order-wait.js'

export type NextAttempt =
  | { kind: 'none' }
  | { kind: 'due' }
  | { kind: 'retry', atMs: number }
  /** Behind `behind`; attempted when that one is delivered or failed, or at `byMs` at the latest. */
  | { kind: 'waiting', behind: string, byMs: number }

export interface EventView {
  id: string
  status: string
  attempts: number
  attemptsThisRound: number
  receivedAt: string
  /** `due`, `retry`, `waiting`, or null once delivered or failed. */
  next: Exclude<NextAttempt['kind'], 'none'> | null
  /** The retry's time, or the end of the order wait; null when due now, delivered or failed. */
  nextAttemptAt: string | null
  /** The earlier event of its order key it waits behind (or, its wait over, goes ahead of). */
  waitingBehind: string | null
  key: string
  orderKey: string | null
  conflictWith: string | null
  source: string
  bytes: number
}

/** Pure. */
export function nextAttemptOf (event: Pick<EventSummary, 'status' | 'receivedAtMs' | 'nextAttemptAtMs' | 'waitingBehind'>, nowMs: number, orderMaxWaitMs: number): NextAttempt {
  if (event.status !== 'pending') return { kind: 'none' }
  const atMs = attemptableAtMs(event, orderMaxWaitMs)
  if (event.waitingBehind !== null && event.receivedAtMs + orderMaxWaitMs > nowMs) return { kind: 'waiting', behind: event.waitingBehind, byMs: atMs }
  return atMs <= nowMs ? { kind: 'due' } : { kind: 'retry', atMs }
}

/** Pure. */
export function eventView (event: EventSummary, nowMs: number, orderMaxWaitMs: number): EventView {
  const next = nextAttemptOf(event, nowMs, orderMaxWaitMs)
  const atMs = next.kind === 'retry' ? next.atMs : next.kind === 'waiting' ? next.byMs : null
  return {
    id: event.id,
    status: event.status,
    attempts: event.attemptsTotal,
    attemptsThisRound: event.attempts,
    receivedAt: iso(event.receivedAtMs),
    next: next.kind === 'none' ? null : next.kind,
    nextAttemptAt: atMs === null ? null : iso(atMs),
    waitingBehind: event.status === 'pending' ? event.waitingBehind : null,
    key: event.key,
    orderKey: event.orderKey,
    conflictWith: event.conflictWith,
    source: event.source,
    bytes: event.bytes,
  }
}

/** Pure: the table's "next attempt" cell. */
export function nextAttemptCell (view: Pick<EventView, 'next' | 'nextAttemptAt' | 'waitingBehind'>): string {
  if (view.next === null) return '-'
  if (view.next === 'waiting') return `after ${view.waitingBehind ?? ''}, by ${view.nextAttemptAt ?? ''}`
  const outOfOrder = view.waitingBehind === null ? '' : ` (ahead of ${view.waitingBehind})`
  return `${view.next === 'due' ? 'now' : view.nextAttemptAt ?? ''}${outOfOrder}`
}

function iso (ms: number): string {
  return new Date(ms).toISOString()
}
