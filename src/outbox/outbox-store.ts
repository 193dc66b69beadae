/**
 * The outbox's store contract: durable events, each delivered to a URL until it is answered 2xx
 * (SPEC §10's inbox, §11's and §12's notifications), kept by two implementations: SQLite (one
 * process, the default) and Redis (several replicas). Nothing above this interface knows which one
 * it talks to.
 *
 * `intake` resolves only once the event is durable (SQLite: committed and synced; Redis: acknowledged)
 * and rejects with WebhookStoreUnavailableError when it cannot be stored. Only pending and failed
 * events count against the bounds: delivered ones are removed, oldest first, to make room
 * (store-room.ts). Delivery is lease-based: `claimDue` hands out due events, at most one per order
 * key (order-wait.ts), and never one another worker holds; every lease ends with `settle` (an
 * attempt was made) or `release` (abandoned, not an attempt).
 */

/** Headers kept with an event and sent with it, lower-cased names, in order. */
export type HeaderList = Array<[string, string]>

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

/** `evicted`: delivered events removed before their retention to make room for this one (absent: none). */
export type IntakeOutcome =
  | { kind: 'stored', id: string, evicted?: number }
  | { kind: 'duplicate', id: string }
  /** Same event id, different body: stored and delivered all the same, marked with the first one's id. */
  | { kind: 'conflict', id: string, conflictWith: string, evicted?: number }

export interface StoredEvent extends NewEvent {
  id: string
  status: EventStatus
  /** Attempts made since the event was stored or last replayed. */
  attempts: number
  nextAttemptAtMs: number
  conflictWith: string | null
}

/**
 * An event handed out for an attempt. `waitedBehind`: the earlier pending event of its order key it
 * goes ahead of, having waited PROXY_WEBHOOK_ORDER_MAX_WAIT_SECONDS (order-wait.ts); null: in order.
 */
export interface ClaimedEvent extends StoredEvent { waitedBehind: string | null }

/** What a listing shows of an event: everything but its body and headers, which stay in the store. */
export type EventSummary = Omit<StoredEvent, 'body' | 'headers'> & {
  bytes: number
  /** Every attempt recorded, in every round (`attempts` counts those since it was stored or last replayed). */
  attemptsTotal: number
  /** Pending and not the earliest pending event of its order key: that event's id (order-wait.ts); else null. */
  waitingBehind: string | null
}

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

export interface OutboxStats {
  pending: number
  failed: number
  oldestPendingReceivedAtMs: number | null
  /** Pending and failed events alone fill a bound: new events are refused until some are delivered or removed. */
  full: boolean
}

/** An event with its place in the order the store took events in (every status). */
export interface SequencedEvent { seq: number, id: string, body: Buffer, receivedAtMs: number }

export interface ListQuery { status?: EventStatus, sinceMs?: number, limit?: number }

export interface OutboxStore {
  intake: (event: NewEvent) => Promise<IntakeOutcome>
  /**
   * Up to `limit` due pending events, leased for `leaseMs`: the earliest pending event of each order
   * key, and a later one only once it has waited the store's order wait (order-wait.ts).
   */
  claimDue: (nowMs: number, limit: number, leaseMs: number) => Promise<ClaimedEvent[]>
  settle: (id: string, attempt: AttemptRecord, next: Settlement) => Promise<void>
  release: (id: string) => Promise<void>
  list: (query: ListQuery) => Promise<EventSummary[]>
  /** The event, every attempt recorded, and the event it waits behind (as in a listing). */
  show: (id: string) => Promise<{ event: StoredEvent, attempts: AttemptRecord[], waitingBehind: string | null } | null>
  /** Back to pending with a fresh schedule and the same id; returns the ids replayed. */
  replay: (selection: { ids: readonly string[] } | { failedSinceMs: number }, nowMs: number) => Promise<string[]>
  stats: () => Promise<OutboxStats>
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
