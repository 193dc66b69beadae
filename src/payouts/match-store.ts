/**
 * The payouts planned within the window, by match key (SPEC §16): what the duplicate check asks and
 * adds to in one atomic step, so that of two racing requests for the same payout one is planned
 * first and the other finds it. One contract, kept by the embedded SQLite file (one sidecar) and by
 * Redis (replicas). An entry names the payment a planned payout is to be (its id is planned before
 * the payments' step stores it); the payments' own records say what became of it. Entries older
 * than the window are pruned as the store goes. Every method rejects when the store cannot answer.
 */

export interface MatchEntry {
  /** The `pay_…` id the payout's payment has, or is to have. */
  id: string
  /** Its externalReference, as sent. */
  reference: string
  /** When it was planned, wall-clock Unix milliseconds. */
  atMs: number
}

/** How many earlier entries a claim answers: more than this many open payouts of one payout is its own alarm. */
export const CLAIM_ANSWER_LIMIT = 16

export interface MatchStore {
  /**
   * Atomically: the entries of `match` planned at or after `sinceMs` (newest first, at most
   * CLAIM_ANSWER_LIMIT), then `entry` added. `ttlMs`: how long the entry need be kept.
   */
  claim: (match: string, entry: MatchEntry, sinceMs: number, ttlMs: number) => Promise<MatchEntry[]>
  /** Takes back an entry whose payout was not sent as that payment (refused, held, dropped). */
  remove: (match: string, entry: MatchEntry) => Promise<void>
  close: () => Promise<void>
}
