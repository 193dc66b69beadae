/**
 * The sidecar's approvals loops (SPEC §11), once a second and at once after a decision taken here:
 * one expires pending approvals whose time is up (silence is never consent), gives the amounts of
 * rejected and expired ones back and keeps `approvals_pending` current; the other forwards approved
 * ones. A decision taken with the CLI, in another process, is so acted on within 2 s; one taken
 * while the sidecar was down, at its next start. Once an hour the first removes the settled ones past
 * their retention. Its first look writes every approval's held mark (held-marks.ts), and every look
 * until one could.
 *
 * Every record is verified before anything is done with it (record-verifier.ts). Each step it
 * writes is sealed and conditional (the store's compare-and-set), and a held amount is given back
 * under its own name (release-reservations.ts), so whichever replica or loop settles a record, the
 * amount comes back once: two replicas' loops meet the same records every second.
 */
import type { Logger } from 'pino'
import type { Clock, TimerHandle } from '../clock.js'
import { DEFAULT_WEBHOOK_RETENTION_S } from '../config/schema.js'
import { serialPasses } from '../loops/serial-passes.js'
import type { StateStore } from '../state/state-store.js'
import type { ForwardApproval } from './approval-forwarder.js'
import type { ApprovalMetrics } from './approval-metrics.js'
import type { ApprovalNotifier } from './approval-notifier.js'
import type { ApprovalRecord } from './approval-record.js'
import { sealDecision, sealStage } from './approval-seal.js'
import type { ApprovalStore } from './approval-store.js'
import { approvalView } from './approval-view.js'
import type { HeldMarks } from './held-marks.js'
import type { RecordVerifier } from './record-verifier.js'
import { releaseReservations } from './release-reservations.js'

export const APPROVAL_LOOK_INTERVAL_MS = 1000
/** By the wall clock, as the records' times are: the inbox's cleanup interval. */
export const APPROVAL_CLEANUP_INTERVAL_MS = 3_600_000

/**
 * SPEC §11 names no retention: decided approvals are kept as long as the inbox keeps its delivered
 * events by default (§10, 7 days), or as long as §8 keeps a reference's record when that is longer,
 * since a rejected or expired approval is that record for the agent's retry. Counted from the decision.
 */
export function approvalRetentionMs (recordTtlMs: number): number {
  return Math.max(DEFAULT_WEBHOOK_RETENTION_S * 1000, recordTtlMs)
}

export interface ApprovalWorker {
  start: () => void
  /** Looks now (after a decision over HTTP or on the console) rather than at the next interval. */
  nudge: () => void
  close: () => Promise<void>
}

export interface WorkerOptions {
  approvals: ApprovalStore
  state: StateStore
  forward: ForwardApproval
  clock: Clock
  log: Logger
  metrics: ApprovalMetrics
  verifier: RecordVerifier
  /** Told of every decision (deduplicated by the store), before it is acted on. */
  notifier: ApprovalNotifier | null
  /** How long a settled approval is kept after its decision (approvalRetentionMs). */
  retentionMs: number
  /** Written from the store at the first look that can (held-marks.ts). */
  marks: HeldMarks
}

export function createApprovalWorker (options: WorkerOptions): ApprovalWorker {
  const { approvals, state, forward, clock, log, metrics, notifier, marks, verifier } = options
  let timer: TimerHandle | null = null
  let closed = false
  let nextCleanupMs = 0

  async function notified (decided: ApprovalRecord, nowMs: number): Promise<void> {
    // A notification store that fails must not hold up the payment: logged, and tried again at the next look until
    // settled.
    const stored = await notifier?.notify(`approval.${decided.status as 'approved' | 'rejected' | 'expired'}`, approvalView(decided, nowMs)).catch((err: unknown) => {
      log.error({ approval: decided.id, caller: decided.caller, err }, 'approval notification could not be stored')
      return false
    })
    if (stored === true) metrics.step(decided.caller, 'notified')
  }

  /**
   * Expiries, rejected and expired amounts given back, the gauge, retention: store and state work only, never an
   * upstream.
   */
  async function settle (): Promise<void> {
    const nowMs = clock.wallMs()
    if (!marks.complete) await marks.writeAll(approvals, state, nowMs, options.retentionMs)
    for (const due of await approvals.dueToExpire(nowMs)) {
      if (!verifier.verified(due)) continue
      const decision = { status: 'expired' as const, by: null, byCaller: null, reason: null, atMs: nowMs }
      const outcome = await approvals.decide(
        due.id,
        { ...decision, seal: sealDecision(verifier.key, due.holdSeal, decision) },
        nowMs,
      )
      if (outcome.kind !== 'decided') continue
      log.info({ approval: due.id, caller: due.caller }, 'approval expired: the request is not sent')
      metrics.step(due.caller, 'expired')
    }
    for (const decided of await approvals.toSettle()) {
      if (closed) return
      if (decided.status === 'approved' || !verifier.verified(decided)) continue
      await notified(decided, nowMs)
      // Given back first, under its own name: a crash before the stage is written gives back nothing twice.
      if (!await releaseReservations(state, decided, log)) continue
      if (await approvals.moveForward(decided.id, 'none', 'answered', sealStage(verifier.key, decided.decisionSeal ?? '', 'answered'))) {
        // A rejection taken with the CLI (another process) is logged and counted here, once.
        if (decided.status === 'rejected' && decided.decidedByCaller === 'cli') {
          log.info({ approval: decided.id, caller: decided.caller, decidedBy: decided.decidedBy, decidedByCaller: 'cli', status: 'rejected' }, 'approval rejected')
          metrics.step(decided.caller, 'rejected')
        }
        log.info({ approval: decided.id, caller: decided.caller, status: decided.status }, 'held amount given back to the day total')
      }
    }
    // Counted by the store's index, not read: a loop that read 10,000 pending records every second
    // took a fifth of the event loop. Each is verified where it is acted on or shown.
    metrics.pending((await approvals.page({ status: 'pending', offset: 0, limit: 0 })).total)
    if (nowMs >= nextCleanupMs) {
      nextCleanupMs = nowMs + APPROVAL_CLEANUP_INTERVAL_MS
      const removed = await approvals.removeSettledBefore(nowMs - options.retentionMs).catch((err: unknown) => {
        log.error({ err }, 'approval retention cleanup failed')
        return 0
      })
      if (removed > 0) log.info({ removed }, 'approval retention: settled approvals removed')
    }
  }

  /** Approved requests forwarded, each as long as its provider takes. */
  async function send (): Promise<void> {
    const nowMs = clock.wallMs()
    for (const decided of await approvals.toSettle()) {
      if (closed) return
      if (decided.status !== 'approved' || !verifier.verified(decided)) continue
      await notified(decided, nowMs)
      await forward(decided)
    }
  }

  // Two loops, so that a rejection (which the console waits for, give-back.ts) never waits behind
  // an approved request's forward, which takes as long as the provider. They meet no record twice
  // (one takes approved ones, the other the rest), and each step they write is conditional anyway.
  const failed = 'approvals could not be processed; trying again shortly'
  const loops = [
    serialPasses(settle, { stopped: () => closed, counted: (o) => { metrics.pass('approvals', o) }, log, failed }),
    serialPasses(send, { stopped: () => closed, counted: (o) => { metrics.pass('approvals_forward', o) }, log, failed }),
  ]
  const run = (): void => { for (const loop of loops) loop.run() }

  function schedule (): void {
    if (closed) return
    timer = clock.setTimeout(() => { run(); schedule() }, APPROVAL_LOOK_INTERVAL_MS)
    timer.unref?.()
  }

  return {
    start () {
      notifier?.start()
      run()
      schedule()
    },
    nudge: run,
    async close () {
      closed = true
      if (timer !== null) clock.clearTimeout(timer)
      await Promise.all(loops.map(async (loop) => { await loop.idle() }))
      await notifier?.stop()
    },
  }
}
