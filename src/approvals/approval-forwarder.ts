/**
 * Sends an approved request (SPEC §11), once: the stored record as it is (never altered after the
 * person saw it), with the environment's token over the shared upstream dispatcher, under the
 * reference's §8 claim, so an agent's retry meanwhile gets 409 and afterwards the recorded answer.
 *
 * The forwarding state is written before the send (`none` -> `sending`) and after the answer
 * (`answered`), so a restart resends only a request whose answer was outstanding when the process
 * died, and says so in the log. A record without a valid MAC is never sent.
 */
import type { Logger } from 'pino'
import type { Dispatcher } from 'undici'
import type { EnvironmentName } from '../config/config.js'
import { approvedAnswered, followApproved } from '../payments/approved-send.js'
import type { PaymentFollower } from '../payments/payment-follower.js'
import { buildClientResponseHeaders } from '../headers/header-policy.js'
import { headersToRecord, isRecordable } from '../idempotency/idempotency-decision.js'
import type { StateStore } from '../state/state-store.js'
import type { TokenSource } from '../tokens/token-source.js'
import { hasValidMac, type MacKey } from './approval-mac.js'
import type { ApprovalMetrics } from './approval-metrics.js'
import type { ApprovalRecord } from './approval-record.js'
import type { ApprovalStore } from './approval-store.js'
import { releaseReservations } from './release-reservations.js'

export interface ForwarderOptions {
  approvals: ApprovalStore
  state: StateStore
  sources: ReadonlyMap<EnvironmentName, TokenSource>
  dispatcher: Dispatcher
  macKey: MacKey
  log: Logger
  metrics: ApprovalMetrics
  /** §8: how long the answer is kept for retries, and how long a claim may be held. */
  recordTtlMs: number
  inFlightTtlMs: number
  /** Payments (SPEC §12): the intent before the send, the answer after. */
  payments?: PaymentFollower | null | undefined
}

export type ForwardApproval = (approval: ApprovalRecord) => Promise<void>

export function createApprovalForwarder (options: ForwarderOptions): ForwardApproval {
  const { approvals, state, sources, dispatcher, macKey, log, metrics } = options
  // Logged once per record and process, not once per look.
  const refused = new Set<string>()

  async function tokenFor (environment: string): Promise<string | null> {
    const source = sources.get(environment as EnvironmentName)
    if (source === undefined) return null
    return source.current() ?? await source.get().catch(() => null)
  }

  return async function forward (approval) {
    const fields = { approval: approval.id, caller: approval.caller }
    if (!hasValidMac(macKey, approval)) {
      if (!refused.has(approval.id)) {
        log.error(fields, 'approved record has no valid MAC: not forwarded (was the store written by hand?)')
        metrics.step(approval.caller, 'refused_mac')
      }
      refused.add(approval.id)
      return
    }
    const claim = await state.claim(approval.key, options.inFlightTtlMs)
    if (claim.kind === 'recorded') {
      // The answer was recorded before the process stopped: it is not sent again.
      await approvals.moveForward(approval.id, approval.forward, 'answered')
      return
    }
    // Another replica is sending it, or a crashed process's mark has yet to expire: look again later.
    if (claim.kind === 'in-flight') return
    // The token first: without one nothing is sent, and the next look tries again.
    const token = await tokenFor(approval.environment)
    if (token === null) {
      log.warn(fields, 'approved request waits for a token')
      await state.abort(approval.key, claim.owner)
      return
    }
    // SPEC §12: nothing is sent before its payment intent is stored; the next look tries again.
    const payment = await followApproved(options.payments, approval).catch(() => undefined)
    if (payment === undefined) {
      log.warn(fields, 'approved request waits: its payment intent cannot be stored')
      await state.abort(approval.key, claim.owner)
      return
    }
    const resend = approval.forward === 'sending'
    if (!resend && !await approvals.moveForward(approval.id, 'none', 'sending')) {
      await state.abort(approval.key, claim.owner)
      return
    }
    // A decision taken with the CLI (another process) is logged and counted here, once, where the sidecar learns of it.
    if (!resend && approval.decidedByCaller === 'cli') {
      log.info({ ...fields, decidedBy: approval.decidedBy, decidedByCaller: 'cli', status: 'approved' }, 'approval approved')
      metrics.step(approval.caller, 'approved')
    }
    if (resend) log.info(fields, 'approved request resent: its answer was outstanding when the process stopped (same reference)')
    metrics.step(approval.caller, resend ? 'resent' : 'forwarded')
    log.info(fields, 'approved request forwarded')
    try {
      const base = new URL(approval.upstreamUrl)
      // The shared dispatcher's own request(): the same pools, timeouts and IP family as proxied requests.
      const answer = await dispatcher.request({
        origin: base.origin,
        path: `${base.pathname}${approval.path}${approval.query === '' ? '' : `?${approval.query}`}`,
        method: approval.method,
        headers: { ...approval.headers, authorization: `Bearer ${token}` },
        body: approval.body,
      })
      const body = Buffer.from(await answer.body.arrayBuffer())
      const status = answer.statusCode
      const paymentHeader = await approvedAnswered(options.payments, payment, { status, body, headers: answer.headers })
      if (isRecordable(status)) {
        const headers = { ...headersToRecord(buildClientResponseHeaders(answer.headers)), ...paymentHeader }
        await state.finish(approval.key, claim.owner, { fingerprint: approval.fingerprint, status, headers, body }, options.recordTtlMs)
      } else {
        await state.abort(approval.key, claim.owner)
      }
      // SPEC §7: a 4xx means no transaction happened, so the day's total gets the amount back.
      if (status >= 400 && status < 500) await releaseReservations(state, approval, log)
      log.info({ ...fields, status }, 'approved request answered')
      metrics.step(approval.caller, 'answered')
    } catch (err) {
      // No answer (or none readable): the transaction may have happened, so the amount stays counted
      // and the request is not sent again by us; the agent's retry is held for a new decision.
      log.warn({ ...fields, err }, 'approved request got no answer; not sent again')
      await approvedAnswered(options.payments, payment, null)
      await state.abort(approval.key, claim.owner).catch(() => undefined)
    }
    await approvals.moveForward(approval.id, 'sending', 'answered')
  }
}
