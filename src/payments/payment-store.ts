/**
 * The payments' durable store (SPEC §12), one contract kept by the embedded SQLite file (one
 * sidecar) and Redis (replicas). Writers never overwrite each other: an update names the version it
 * read, and loses (null) when another came first; the caller reads again and applies its input to
 * what is there (the state machine is pure, so that is always right). The worker leases due records
 * (`claimDue`), so with Redis one replica at a time acts on a payment, and a dead replica's leases
 * are taken over once they end. Every method rejects when the store cannot answer.
 */
import { createHash } from 'node:crypto'
import type { PaymentRecord, PaymentState } from './payment-record.js'

/** References and transaction ids are text a caller or a sender chose, of any length: indexed by their SHA-256. */
export function indexKey (text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

export type CreateOutcome = { kind: 'created' } | { kind: 'exists', record: PaymentRecord }

export interface PaymentQuery {
  state?: PaymentState | undefined
  /** Any of these states, as one list in the store's order (with no other filter). */
  states?: readonly PaymentState[] | undefined
  /** Only this caller's payments. */
  caller?: string | undefined
  /** Created at or after. */
  sinceMs?: number | undefined
  /**
   * With `unverified` asked for: read the newest records through their seals again (a person's page), not only those
   * found so far.
   */
  rescan?: boolean | undefined
  limit: number
}

export interface PaymentCounts {
  pending: number
  stale: number
  unknown: number
  /** Records read as unverified by this process (the sealed store's count; a store itself holds none). */
  unverified: number
}

export interface PaymentStore {
  /**
   * Stores a new record unless its §8 key has one already (then resolves that one, to join it),
   * durably before it resolves: the intent is on disk before the request is forwarded.
   */
  create: (record: PaymentRecord) => Promise<CreateOutcome>
  get: (id: string) => Promise<PaymentRecord | null>
  byKey: (key: string) => Promise<PaymentRecord | null>
  /** The most recent payment with this reference, of `caller` and in `environment` when given. */
  byReference: (
    reference: string,
    filter: { caller?: string | undefined, environment?: string | undefined },
  ) => Promise<PaymentRecord | null>
  /** The most recent payment with this transaction id. */
  byTransactionId: (transactionId: string) => Promise<PaymentRecord | null>
  /**
   * Writes `record` if the stored one is still at `record.version`; resolves it with its new version,
   * or null when another writer came first. Ends this store's lease on it, if it holds one.
   */
  update: (record: PaymentRecord) => Promise<PaymentRecord | null>
  /** Removes a record still at `record.version` (dropped: no transaction happened); false otherwise. */
  remove: (record: PaymentRecord) => Promise<boolean>
  /**
   * Up to `limit` records due at `nowMs`, earliest first, leased to this store for `leaseMs`; never one leased
   * elsewhere.
   */
  claimDue: (nowMs: number, limit: number, leaseMs: number) => Promise<PaymentRecord[]>
  /** Ends this store's lease without a change: the record is claimable again at its due time. */
  release: (id: string) => Promise<void>
  /** Newest first. */
  list: (query: PaymentQuery) => Promise<PaymentRecord[]>
  counts: () => Promise<PaymentCounts>
  /**
   * Removes final payments settled before `beforeMs` whose notifications are stored; never another. Resolves how many.
   */
  removeSettledBefore: (beforeMs: number) => Promise<number>
  /** How far the inbox's events have been matched (their store's sequence number); null before the first time. */
  cursor: () => Promise<number | null>
  /** Moves the cursor forward to `seq` (never back: two replicas may both move it). */
  advanceCursor: (seq: number) => Promise<void>
  /** Whether the store takes writes now (`/readyz`). */
  ready: () => boolean
  close: () => Promise<void>
}
