/**
 * What a person reads and decides approvals with beside the HTTP API and the CLI (the console, SPEC
 * §14), shared as `approvals`: every record with the approval object its verifier shows, the
 * decision the other two take (decide-approval.ts), counted as theirs is, and a rejection's wait
 * for a worker to give its amount back (give-back.ts: whoever holds the desk holds no state store).
 */
import type { ApprovalMetrics } from './approval-metrics.js'
import type { ApprovalRecord, HeldReservation } from './approval-record.js'
import type { ApprovalStore, PageQuery } from './approval-store.js'
import type { ApprovalView } from '../objects/approval-object.js'
import { decideApproval, type DecisionRequest } from './decide-approval.js'
import { GIVE_BACK_WAIT_MS, waitGivenBack } from './give-back.js'
import type { RecordVerifier } from './record-verifier.js'

/** A record and what a person is shown of it (one whose seals fail: rejected, never pending). */
export interface ShownApproval { record: ApprovalRecord, view: ApprovalView }

/** `nowMs` is the reader's clock: a pending approval past it is shown expired. */
export interface ApprovalDesk {
  page: (query: PageQuery, nowMs: number) => Promise<{ approvals: ShownApproval[], total: number }>
  get: (id: string, nowMs: number) => Promise<ShownApproval | null>
  /** Throws decideApproval's errors: ApprovalNotFoundError, ApprovalAlreadyDecidedError. */
  decide: (id: string, request: DecisionRequest, nowMs: number) => Promise<ApprovalRecord>
  /** True once a rejection's amount is back in the day's total; false when GIVE_BACK_WAIT_MS passed first. */
  givenBack: (id: string) => Promise<boolean>
  /** The worker looks now rather than at its next interval: a decision is acted on at once. */
  nudge: () => void
  /** What the caller's pending approvals reserve against its day totals (SPEC §16's `heldForApproval`). */
  heldFor: (callerId: string) => Promise<HeldReservation[]>
}

export function createApprovalDesk (
  approvals: { store: ApprovalStore, verifier: RecordVerifier, metrics: ApprovalMetrics },
  nudge: () => void,
): ApprovalDesk {
  const { store, verifier, metrics } = approvals
  const shown = (record: ApprovalRecord, nowMs: number): ShownApproval => ({
    record,
    view: verifier.view(record, nowMs),
  })
  return {
    async page (query, nowMs) {
      const found = await store.page(query)
      return { approvals: found.approvals.map((record) => shown(record, nowMs)), total: found.total }
    },
    async get (id, nowMs) {
      const record = await store.get(id)
      return record === null ? null : shown(record, nowMs)
    },
    async decide (id, request, nowMs) {
      const decided = await decideApproval(store, verifier, id, request, nowMs)
      metrics.step(decided.caller, request.status)
      return decided
    },
    givenBack: async (id) => await waitGivenBack(store, id, GIVE_BACK_WAIT_MS),
    nudge,
    async heldFor (callerId) {
      const pending = await store.list('pending')
      return pending.filter((record) => record.caller === callerId).flatMap((record) => record.reservations)
    },
  }
}
