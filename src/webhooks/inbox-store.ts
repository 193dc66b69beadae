/**
 * The inbox's store contract (SPEC §10), kept by two implementations: SQLite (one process, the
 * default) and Redis (several replicas). Nothing above this interface knows which one it talks to.
 *
 * `intake` resolves only once the event is durable (SQLite: committed and synced; Redis: acknowledged)
 * and rejects with WebhookStoreUnavailableError when it cannot be stored. Delivery is lease-based:
 * `claimDue` hands out due events, at most one per order key, and never one another worker holds;
 * every lease ends with `settle` (an attempt was made) or `release` (abandoned, not an attempt).
 */
import type { HeaderList } from './stored-headers.js'

export type EventStatus = 'pending' | 'delivered' | 'failed'

export interface NewEvent {
  key: string
  bodySha256: string
  orderKey: string | null
  body: Buffer
  headers: HeaderList
  source: string
  receivedAtMs: number
}

export type IntakeOutcome =
  | { kind: 'stored', id: string }
  | { kind: 'duplicate', id: string }
  /** Same event id, different body: stored and delivered all the same, marked with the first one's id. */
  | { kind: 'conflict', id: string, conflictWith: string }

export interface StoredEvent extends NewEvent {
  id: string
  status: EventStatus
  /** Attempts made since the event was stored or last replayed. */
  attempts: number
  nextAttemptAtMs: number
  conflictWith: string | null
}

/** What a listing shows of an event: everything but its body and headers, which stay in the store. */
export type EventSummary = Omit<StoredEvent, 'body' | 'headers'> & { bytes: number }

export interface AttemptRecord {
  atMs: number
  /** HTTP status, or null when no answer came (timeout, refused, reset). */
  status: number | null
  error: string | null
  durationMs: number
}

export type Settlement =
  | { status: 'delivered' }
  | { status: 'pending', nextAttemptAtMs: number }
  | { status: 'failed' }

export interface InboxStats { pending: number, failed: number, oldestPendingReceivedAtMs: number | null }

/** An event with its place in the order the store took events in (every status). */
export interface SequencedEvent { seq: number, id: string, body: Buffer, receivedAtMs: number }

export interface ListQuery { status?: EventStatus, sinceMs?: number, limit?: number }

export interface InboxStore {
  intake: (event: NewEvent) => Promise<IntakeOutcome>
  /** Up to `limit` due pending events, leased for `leaseMs`; the earliest pending event of each order key only. */
  claimDue: (nowMs: number, limit: number, leaseMs: number) => Promise<StoredEvent[]>
  settle: (id: string, attempt: AttemptRecord, next: Settlement) => Promise<void>
  release: (id: string) => Promise<void>
  list: (query: ListQuery) => Promise<EventSummary[]>
  show: (id: string) => Promise<{ event: StoredEvent, attempts: AttemptRecord[] } | null>
  /** Back to pending with a fresh schedule and the same id; returns the ids replayed. */
  replay: (selection: { ids: readonly string[] } | { failedSinceMs: number }, nowMs: number) => Promise<string[]>
  stats: () => Promise<InboxStats>
  /** Removes delivered and failed events received before `beforeMs`; pending ones never. */
  removeSettledBefore: (beforeMs: number) => Promise<number>
  /**
   * Events stored after sequence number `seq`, in the order stored, at most `limit`: what a reader
   * outside the inbox (payments, SPEC §12) follows with a durable cursor of its own, so that an event
   * answered 200 reaches it after a crash too. Sequence numbers grow with every event stored.
   */
  eventsAfter: (seq: number, limit: number) => Promise<SequencedEvent[]>
  /** The latest event's sequence number (0 when none was ever stored). */
  lastEventSeq: () => Promise<number>
  /** Whether the store takes writes now. */
  ready: () => boolean
  close: () => Promise<void>
}
