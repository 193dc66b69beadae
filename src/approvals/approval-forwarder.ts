/**
 * Sends an approved request (SPEC §11), once: the stored record as it was sealed at the hold (never
 * altered after the person saw it), with the token of the environment it was sealed for, to that
 * environment's upstream as configured now, over the shared upstream dispatcher, under the
 * reference's §8 claim, so an agent's retry meanwhile gets 409 and afterwards the recorded answer.
 *
 * A record whose seals do not verify is never sent (record-verifier.ts). Nor is one whose sealed
 * upstream is not the configured base of its environment and interface: the token only ever goes
 * to the base it belongs to.
 *
 * The forwarding stage is written, sealed, before the send (`none` -> `sending`) and after the
 * answer (`answered`), so a restart resends only a request whose answer was outstanding when the
 * process died, and says so in the log.
 */
import type { Logger } from 'pino'
import type { Dispatcher } from 'undici'
import type { EnvironmentName } from '../config/config.js'
import { buildClientResponseHeaders } from '../headers/header-policy.js'
import { headersToRecord, isRecordable } from '../idempotency/idempotency-decision.js'
import type { StateStore } from '../state/state-store.js'
import type { TokenSource } from '../tokens/token-source.js'
import type { ApprovalMetrics } from './approval-metrics.js'
import type { ApprovalRecord, ForwardState } from './approval-record.js'
import { sealStage } from './approval-seal.js'
import type { ApprovalStore } from './approval-store.js'
import type { RecordVerifier } from './record-verifier.js'
import { releaseReservations } from './release-reservations.js'

export interface ForwarderOptions {
  approvals: ApprovalStore
  state: StateStore
  sources: ReadonlyMap<EnvironmentName, TokenSource>
  dispatcher: Dispatcher
  verifier: RecordVerifier
  /** The configured upstream base (origin and base path) of an environment and interface; null when there is none. */
  upstreamOf: (environment: string, iface: string) => string | null
  log: Logger
  metrics: ApprovalMetrics
  /** §8: how long the answer is kept for retries, and how long a claim may be held. */
  recordTtlMs: number
  inFlightTtlMs: number
  /** What follows a forwarded request (SPEC §12's payments, when on); none by default. */
  follow?: SendFollower | null | undefined
}

/** The provider's answer as the forwarder read it. */
export interface SentAnswer { status: number, body: Buffer, headers: Record<string, string | string[] | undefined> }

/**
 * Told of a request before it is sent (SPEC §12: a payment's intent is stored first, and the promise
 * rejects when it cannot be, so nothing is sent unrecorded); resolves what it is told of the answer
 * (null: none came), which resolves headers to record with that answer.
 */
export type SendFollower = (
  approval: ApprovalRecord,
) => Promise<(answer: SentAnswer | null) => Promise<Record<string, string>>>

const notFollowed: SendFollower = async () => async () => ({})

export type ForwardApproval = (approval: ApprovalRecord) => Promise<void>

export function createApprovalForwarder (options: ForwarderOptions): ForwardApproval {
  const { approvals, state, sources, dispatcher, verifier, log, metrics } = options
  const follow = options.follow ?? notFollowed
  // Logged once per record and process, not once per look.
  const misdirected = new Set<string>()

  async function tokenFor (environment: string): Promise<string | null> {
    const source = sources.get(environment as EnvironmentName)
    if (source === undefined) return null
    return source.current() ?? await source.get().catch(() => null)
  }

  /** Moves the record to `to`, sealed off its decision. */
  async function move (approval: ApprovalRecord, from: ForwardState, to: ForwardState): Promise<boolean> {
    return await approvals.moveForward(approval.id, from, to, sealStage(verifier.key, approval.decisionSeal ?? '', to))
  }

  return async function forward (approval) {
    const fields = { approval: approval.id, caller: approval.caller }
    if (approval.status !== 'approved' || !verifier.verified(approval)) return
    const upstream = options.upstreamOf(approval.environment, approval.interface)
    if (upstream !== approval.upstreamUrl) {
      if (!misdirected.has(approval.id)) {
        log.error({ ...fields, environment: approval.environment, interface: approval.interface }, 'approved request not sent: its upstream is not the configured base of its environment and interface (the configuration changed since it was held)')
      }
      misdirected.add(approval.id)
      return
    }
    const claim = await state.claim(approval.key, options.inFlightTtlMs)
    if (claim.kind === 'recorded') {
      // The answer was recorded before the process stopped: it is not sent again. A 4xx recorded
      // before its amount came back gives it back now (once, whoever did it first).
      if (claim.record.status >= 400 &&
        claim.record.status < 500 &&
        !await releaseReservations(state, approval, log)) return
      await move(approval, approval.forward, 'answered')
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
    const answered = await follow(approval).catch(() => undefined)
    if (answered === undefined) {
      log.warn(fields, 'approved request waits: its payment intent cannot be stored')
      await state.abort(approval.key, claim.owner)
      return
    }
    const resend = approval.forward === 'sending'
    if (!resend && !await move(approval, 'none', 'sending')) {
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
      const followHeaders = await answered({ status, body, headers: answer.headers })
      if (isRecordable(status)) {
        const headers = { ...headersToRecord(buildClientResponseHeaders(answer.headers)), ...followHeaders }
        await state.finish(
          approval.key,
          claim.owner,
          { fingerprint: approval.fingerprint, status, headers, body },
          options.recordTtlMs,
        )
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
      await answered(null)
      await state.abort(approval.key, claim.owner).catch(() => undefined)
    }
    await move(approval, 'sending', 'answered')
  }
}
