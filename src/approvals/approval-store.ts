/**
 * The approvals' durable store (SPEC §11), one contract kept by the embedded SQLite file (one
 * sidecar) and Redis (replicas). A decision is atomic: of two at once, one wins and the other
 * finds the approval decided. Every method rejects when the store cannot answer.
 */
import type { ApprovalStatus } from '../objects/approval-object.js'
import type { ApprovalRecord, DecideOutcome, Decision, ForwardState } from './approval-record.js'

/** A page of approvals for a person (SPEC §14): `decided` is approved, rejected or expired. */
export interface PageQuery { status: 'pending' | 'decided', offset: number, limit: number }
export interface ApprovalPage { approvals: ApprovalRecord[], total: number }

export interface ApprovalStore {
  /** Stores a new pending approval, durably (synced) before it resolves. */
  create: (approval: ApprovalRecord) => Promise<void>
  get: (id: string) => Promise<ApprovalRecord | null>
  /** The latest approval of a §8 record key. */
  byKey: (key: string) => Promise<ApprovalRecord | null>
  list: (status?: ApprovalStatus) => Promise<ApprovalRecord[]>
  /**
   * One page by the stored status, pending ones oldest first (the first to expire on top), decided
   * ones newest first, and how many there are in all: what the console shows with 10,000 pending
   * without reading them all. Every record still goes through the verifier before it is shown.
   */
  page: (query: PageQuery) => Promise<ApprovalPage>
  /**
   * Pending -> the decision's status, only when still pending. `expired` is refused past expiry by the caller's clock.
   */
  decide: (id: string, decision: Decision, nowMs: number) => Promise<DecideOutcome>
  /**
   * Decided records not yet settled (approved: forwarded and answered; rejected, expired: amounts given back),
   * `sending` ones included.
   */
  toSettle: () => Promise<ApprovalRecord[]>
  /** Pending records whose time is up at `nowMs`. */
  dueToExpire: (nowMs: number) => Promise<ApprovalRecord[]>
  /** Moves the forwarding state from `from` to `to` with its seal; false when it was not `from` (another took it). */
  moveForward: (id: string, from: ForwardState, to: ForwardState, seal: string) => Promise<boolean>
  /**
   * Removes decided records that are settled (forward `answered`) and were decided before
   * `beforeMs`; never a pending one, nor an approved one not yet answered. Resolves how many.
   */
  removeSettledBefore: (beforeMs: number) => Promise<number>
  close: () => Promise<void>
}
