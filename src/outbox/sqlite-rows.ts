/** Rows of the SQLite store <-> the store's records. */
import type { AttemptRecord, EventStatus, EventSummary, HeaderList, StoredEvent } from './outbox-store.js'

export interface EventRow {
  id: string
  key: string
  body_sha256: string
  order_key: string | null
  body: Buffer
  headers: string
  source: string
  received_at: number
  status: string
  attempts: number
  next_attempt_at: number
  conflict_with: string | null
}

export type SummaryRow = Omit<EventRow, 'body' | 'headers'> & { bytes: number, attempts_total: number, waiting_behind: string | null }

export interface AttemptRow { at: number, status: number | null, error: string | null, duration_ms: number }

export function eventOf (row: EventRow): StoredEvent {
  return { ...fieldsOf(row), body: row.body, headers: JSON.parse(row.headers) as HeaderList }
}

export function summaryOf (row: SummaryRow): EventSummary {
  return { ...fieldsOf(row), bytes: row.bytes, attemptsTotal: row.attempts_total, waitingBehind: row.waiting_behind }
}

/** The columns an event and its summary share. */
function fieldsOf (row: Omit<EventRow, 'body' | 'headers'>): Omit<StoredEvent, 'body' | 'headers'> {
  return {
    id: row.id,
    key: row.key,
    bodySha256: row.body_sha256,
    orderKey: row.order_key,
    source: row.source,
    receivedAtMs: row.received_at,
    status: row.status as EventStatus,
    attempts: row.attempts,
    nextAttemptAtMs: row.next_attempt_at,
    conflictWith: row.conflict_with,
  }
}

export function attemptOf (row: AttemptRow): AttemptRecord {
  return { atMs: row.at, status: row.status, error: row.error, durationMs: row.duration_ms }
}
