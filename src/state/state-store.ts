/**
 * The shared-state contract (SPEC §8–§9): idempotency claims and records, rate-limit windows and
 * day totals. Two implementations keep it: memory (one process) and Redis (several replicas share
 * one set of records and limits). Nothing above `state/` knows which one it talks to.
 *
 * Every method rejects with `StateUnavailableError` (errors.ts) when the store cannot answer
 * promptly; callers turn that into 503 STATE_UNAVAILABLE and forward nothing unchecked.
 * Keys are built by the callers of this interface and never contain a secret (API key, public
 * key, token, caller key): references and body fingerprints arrive hashed. The store prefixes them.
 */

/** A definitive upstream answer, replayed to a retry with the same reference and body. */
export interface IdempotencyRecord {
  /** Hex SHA-256 of the request body's canonical JSON (RFC 8785). */
  fingerprint: string
  status: number
  /** End-to-end response headers, as the client received them. */
  headers: Record<string, string | string[]>
  body: Buffer
}

export type ClaimOutcome =
  /**
   * This request owns the key until `finish` or `abort` with the same `owner`, or until the mark
   * expires. `held`: the key was marked held (`markHeld`), so an approval (SPEC §11) may answer it.
   */
  | { kind: 'claimed', owner: string, held: boolean }
  | { kind: 'in-flight' }
  | { kind: 'recorded', record: IdempotencyRecord }

export interface RateVerdict {
  admitted: boolean
  /** When not admitted: milliseconds until the next request would be. */
  retryAfterMs: number
}

export interface StoreStatus {
  kind: 'memory' | 'redis'
  ready: boolean
  /** What the server answered when it last refused the connection (a wrong password), never a secret. */
  refusal?: string
}

export interface StateStore {
  /** Atomically marks `key` in flight for `inFlightTtlMs`, unless it is in flight or recorded already. */
  claim: (key: string, inFlightTtlMs: number) => Promise<ClaimOutcome>
  /** Replaces this owner's in-flight mark with the record (kept `ttlMs`); another owner's mark is left alone. */
  finish: (key: string, owner: string, record: IdempotencyRecord, ttlMs: number) => Promise<void>
  /** Drops this owner's in-flight mark, so a retry is forwarded again. */
  abort: (key: string, owner: string) => Promise<void>
  /**
   * Marks `key` held by an approval (SPEC §11) for `ttlMs`, beside its record and in-flight mark,
   * which it leaves alone: the claims of `key` then say `held`. §11's approvals are the record of a
   * held reference; this mark lets every other keyed request learn in its claim's one round trip
   * that it has none, instead of asking the approvals store too.
   */
  markHeld: (key: string, ttlMs: number) => Promise<void>
  /** Sliding window: admits and counts a request when fewer than `limit` were admitted in the last `windowMs`. */
  hit: (key: string, limit: number, windowMs: number) => Promise<RateVerdict>
  /**
   * Adds `amount` to the total at `key` when the sum stays within `limit`, atomically (concurrent
   * reservations never overshoot). Integer minor units, 0 <= amount, limit < 2^63. The total
   * expires `ttlMs` after its first reservation.
   */
  reserve: (key: string, amount: bigint, limit: bigint, ttlMs: number) => Promise<boolean>
  /**
   * Gives back an amount reserved earlier (the provider answered 4xx: no transaction happened; a
   * held request was rejected or expired). With `once`, a name for this giving-back: the same name
   * gives back nothing a second time, on any replica, while the total lives (SPEC §11: a held
   * amount is given back once, whichever replica or loop settles it).
   */
  release: (key: string, amount: bigint, once?: string) => Promise<void>
  /** The total at `key` now: 0 when nothing was reserved (SPEC §16's `GET /limits`). */
  total: (key: string) => Promise<bigint>
  status: () => StoreStatus
  /** Resolves when the store answers a round trip (`check`, readiness). */
  ping: () => Promise<void>
  close: () => Promise<void>
}
