/**
 * What the console is handed (console-setup.ts, from what the features shared; SPEC §14): it has
 * no store of its own for approvals, events or payments, and decides through the same functions as
 * the CLI and the HTTP API. Each capability is null when its feature is off, and its page then says
 * so. Each is the part of its feature's contract the console uses, spelled here (the approval
 * object, which several features show, from objects/): the console imports nothing of the
 * features, so where their code lives is no concern of it.
 */
import type { ApprovalView } from '../objects/approval-object.js'

/** An approval as the console shows it: its approval object, and what of its stored record the object leaves out. */
export interface ConsoleApproval {
  /** Its approval object, as the approvals' record verifier gives it: one whose seals fail is rejected. */
  view: ApprovalView
  record: { query: string, createdAtMs: number, decidedAtMs: number | null, forward: 'none' | 'sending' | 'answered' }
}

/**
 * The approvals' shared part (their ApprovalDesk is one as it is): approvals shown as of `nowMs`,
 * the decision the CLI and the HTTP API take (throwing ApprovalNotFoundError or
 * ApprovalAlreadyDecidedError), whether a rejection's amount is back yet (false after the wait the
 * CLI also makes), and the worker's nudge, so that a decision is acted on at once.
 */
export interface ConsoleApprovals {
  page: (query: { status: 'pending' | 'decided', offset: number, limit: number }, nowMs: number) => Promise<{ approvals: ConsoleApproval[], total: number }>
  get: (id: string, nowMs: number) => Promise<ConsoleApproval | null>
  decide: (id: string, decision: { status: 'approved' | 'rejected', by: string, byCaller: string, reason: string | null }, nowMs: number) => Promise<{ id: string, caller: string }>
  givenBack: (id: string) => Promise<boolean>
  nudge: () => void
}

/** An event as the inbox's store lists it (its `EventSummary`): never its body, only the size. */
export interface ConsoleEventSummary {
  id: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  receivedAtMs: number
  nextAttemptAtMs: number
  key: string
  bytes: number
  conflictWith: string | null
}

/**
 * The part of the inbox's store contract (SPEC §10's list, show and replay) the console uses, and
 * the deliverer's wake-up. The inbox's InboxStore is one as it is, wherever its code lives
 * (webhooks/, outbox/).
 */
export interface ConsoleInbox {
  store: {
    list: (query: { status: 'pending' | 'failed', sinceMs: number, limit: number }) => Promise<ConsoleEventSummary[]>
    show: (id: string) => Promise<{
      event: Omit<ConsoleEventSummary, 'bytes'> & { body: Buffer, headers: Array<[string, string]>, source: string }
      attempts: Array<{ atMs: number, status: number | null, error: string | null, durationMs: number }>
    } | null>
    replay: (selection: { ids: readonly string[] }, nowMs: number) => Promise<string[]>
  }
  wake: () => void
}

/** Environments' tokens (never the token) and the egress IP, for the status page. */
export interface ConsoleStatus {
  tokens: () => Array<{ environment: string, ready: boolean, expiresAt: number | null }>
  egressIp: () => string | null
}

/**
 * SPEC §12's states the console lists: records that failed their seals, payments still not final after their schedule,
 * or whose forward had no answer.
 */
export type ChasedState = 'stale' | 'unknown' | 'unverified'

/**
 * The part of SPEC §12's payment object the console shows, times in whole Unix seconds; null where an unverified
 * record's seals vouch for nothing.
 */
export interface ConsolePayment {
  id: string
  state: string
  providerStatus: string | null
  caller: string | null
  environment: string | null
  interface: string | null
  method: string | null
  path: string | null
  externalReference: string
  transactionId: string | null
  amount: string | null
  currency: string | null
  createdAt: number | null
  lookups: { count: number, lastAt: number | null, lastOutcome: string | null, nextAt: number | null } | null
  settledAt?: number | null
  settledBy?: string | null
  /** Final by the provider's own answer or look-up (SPEC §12 "Settled by an event alone"). */
  confirmed?: boolean
  events?: Array<{ id: string, status: string | null, receivedAt: number, disputed: boolean }> | null
}

/** SPEC §12's states, which a person filters the list of payments by. */
export const PAYMENT_STATE_NAMES = ['sending', 'unknown', 'pending', 'succeeded', 'failed', 'stale', 'unverified'] as const
export type PaymentStateName = typeof PAYMENT_STATE_NAMES[number]

/**
 * What the payments capability (SPEC §12) must offer for the console's pages: a page of payments in
 * the chased states, newest first, with the total; a page of every payment or of one state, with
 * whether another follows; the payments a search names (id, reference or transaction id); one
 * payment; and `payments recheck`'s action for one id (the payment as it stands after the recheck
 * was scheduled, or null when there is none).
 */
export interface ConsolePayments {
  list: (
    query: { states: readonly ChasedState[], offset: number, limit: number },
  ) => Promise<{ payments: ConsolePayment[], total: number }>
  browse: (
    query: { state: PaymentStateName | null, offset: number, limit: number },
  ) => Promise<{ payments: ConsolePayment[], more: boolean }>
  find: (text: string) => Promise<ConsolePayment[]>
  get: (id: string) => Promise<ConsolePayment | null>
  recheck: (id: string) => Promise<ConsolePayment | null>
}
