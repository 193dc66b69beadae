/**
 * SPEC §11 on the proxy's request path, as two root-level preHandlers around the amount step:
 *
 * - `approvalRetries`, after idempotency and before amounts: a retry of a held request (the same §8
 *   record key) is judged by its approval and costs no amount: 202 again while pending, 403 once
 *   rejected or expired, 409 while the approved request is being forwarded, 422 for another body.
 *   (Once the provider answered, idempotency has replayed its answer before this runs.) Only a
 *   claim that says its key is marked held asks the approvals store (held-marks.ts).
 * - `approvalHolds`, after amounts (so the day's total, pending approvals included, is reserved or
 *   refused first): a request above `approveAbove` is stored with exactly what would be forwarded
 *   and answered 202, its key marked held first. Its reservation is kept (202 is not a refusal)
 *   until a decision or expiry.
 *
 * Either 202 drops the reference's §8 in-flight mark before it is sent, not once the response has
 * closed: the approval is the record from then on, and a process killed just after answering
 * would otherwise leave a mark in Redis that holds up the approved forward until it expires.
 */
import fp from 'fastify-plugin'
import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import { callerIdOf } from '../callers/caller.js'
import type { CallerSpec } from '../callers/callers-file.js'
import { ApprovalExpiredError, ApprovalRejectedError, ExternalReferenceRequiredError, IdempotencyInProgressError, IdempotencyKeyReusedError, InternalError, PaymentProbableDuplicateError, StateUnavailableError } from '../errors.js'
import { buildUpstreamHeaders } from '../headers/header-policy.js'
import { heldJsonOf } from '../json/held-json.js'
import { readReference } from '../json/reference.js'
import { plannedPaymentId } from '../objects/payment-id.js'
import { probableDuplicateOf, type ProbableDuplicate } from '../objects/probable-duplicate.js'
import type { RequestTarget } from '../routing/request-target.js'
import type { IdempotencyClaim } from '../idempotency/idempotency-claim.js'
import type { StateStore } from '../state/state-store.js'
import type { ApprovalMetrics } from './approval-metrics.js'
import type { ApprovalNotifier } from './approval-notifier.js'
import type { ApprovalRecord } from './approval-record.js'
import { sealHold } from './approval-seal.js'
import type { ApprovalStore } from './approval-store.js'
import { approvalView, FAILED_VERIFICATION_REASON } from './approval-view.js'
import { heldMarkTtlMs, type HeldMarks } from './held-marks.js'
import { decideHold, type HoldDecision } from './hold-decision.js'
import type { RecordVerifier } from './record-verifier.js'

export interface ApprovalsPluginOptions {
  store: ApprovalStore
  /** §8's store, whose in-flight mark a 202 drops. */
  state: StateStore
  clock: Clock
  ttlMs: number
  keyPointer: string
  metrics: ApprovalMetrics
  notifier: ApprovalNotifier | null
  marks: HeldMarks
  /** How long a decided approval is kept (approvalRetentionMs): its key's held mark lives as long. */
  retentionMs: number
  /** Seals a new record; judges a stored one before a retry is answered by it. */
  verifier: RecordVerifier
}

/** Set by the upstream request, not the client's: never stored, never forwarded as the client's. */
const NOT_STORED = new Set(['authorization', 'host', 'content-length'])

export function newApprovalId (): string {
  return `apr_${randomBytes(16).toString('base64url')}`
}

async function dropMark (request: FastifyRequest, state: StateStore, claim: IdempotencyClaim): Promise<void> {
  claim.settled = true
  // A mark not dropped expires on its own; the store logged the outage.
  await state.abort(claim.key, claim.owner).catch(() => {
    request.log.warn('in-flight mark not dropped: the state store is unavailable; it expires on its own')
  })
}

function answerHeld (reply: FastifyReply, approval: ApprovalRecord, nowMs: number): void {
  reply.code(202).header('location', `/approvals/${approval.id}`).send({ approval: approvalView(approval, nowMs) })
}

/** Only callers with an `approveAbove` can have approvals; everyone else pays no store read. */
function gated (request: FastifyRequest): boolean {
  return request.callerSpec?.amountLimits.some((limit) => limit.approveAbove.size > 0) === true
}

export const approvalRetries = fp(async function approvalRetries (
  app: FastifyInstance,
  options: ApprovalsPluginOptions,
) {
  const { store, state, clock, marks, verifier } = options

  /** Resolves true when it answered (202), rejects with the refusal, false to let the request go on. */
  async function judgeRetry (request: FastifyRequest, reply: FastifyReply, claim: IdempotencyClaim): Promise<boolean> {
    const { key, fingerprint } = claim
    let approval: ApprovalRecord | null
    try {
      approval = await store.byKey(key)
    } catch (err) {
      throw new StateUnavailableError(err)
    }
    if (approval === null) return false
    // Not sealed by this sidecar: treated as rejected, whatever it says (record-verifier.ts).
    if (!verifier.verified(approval)) throw new ApprovalRejectedError(FAILED_VERIFICATION_REASON)
    if (approval.status === 'approved' && approval.forward === 'answered') return false
    if (approval.fingerprint !== fingerprint) {
      request.log.warn({ caller: approval.caller, approval: approval.id, code: 'IDEMPOTENCY_KEY_REUSED' }, 'held request retried with another body')
      throw new IdempotencyKeyReusedError()
    }
    const nowMs = clock.wallMs()
    const expired = approval.status === 'expired' || (approval.status === 'pending' && approval.expiresAtMs <= nowMs)
    if (expired) throw new ApprovalExpiredError()
    if (approval.status === 'rejected') throw new ApprovalRejectedError(approval.reason)
    if (approval.status === 'approved') throw new IdempotencyInProgressError()
    await dropMark(request, state, claim)
    answerHeld(reply, approval, nowMs)
    return true
  }

  // Callback-style: requests of callers without approveAbove (most) cost no promise.
  app.addHook('preHandler', (request, reply, done) => {
    const claim = request.idempotency
    if (claim === null || !gated(request) || (!claim.held && marks.complete)) { done(); return }
    judgeRetry(request, reply, claim).then((answered) => { if (!answered) done() }, done)
  })
}, { name: 'approval-retries', dependencies: ['idempotency'] })

export const approvalHolds = fp(async function approvalHolds (app: FastifyInstance, options: ApprovalsPluginOptions) {
  const { store, state, clock, ttlMs, keyPointer, metrics, notifier, retentionMs, verifier } = options

  // Callback-style: requests that are not held (most) cost no promise.
  app.addHook('preHandler', (request, reply, done) => {
    const caller = request.callerSpec
    const target = request.target
    const amounts = request.amounts
    const duplicateOf = probableDuplicateOf(request)
    // A probable duplicate (SPEC §16) this step cannot hold is refused: it never goes on unjudged.
    const refuseDuplicate = (): void => {
      done(duplicateOf === null ? undefined : new PaymentProbableDuplicateError(callerIdOf(request), duplicateOf))
    }
    if (caller === null || target === null || amounts === null || !gated(request)) { refuseDuplicate(); return }
    const hold = decideHold(caller.amountLimits, amounts, duplicateOf !== null)
    if (hold.kind === 'pass') { done(); return }
    if (hold.kind === 'refuse') { refuseDuplicate(); return }
    holdRequest(request, reply, caller, target, hold, duplicateOf).then(() => undefined, done)
  })

  /** Stores the request and answers 202; rejects with the refusal. */
  async function holdRequest (
    request: FastifyRequest,
    reply: FastifyReply,
    caller: CallerSpec,
    target: RequestTarget,
    hold: Extract<HoldDecision, { kind: 'hold' }>,
    duplicateOf: ProbableDuplicate | null,
  ): Promise<void> {
    // Unreachable: a route without an upstream is refused at onRequest (proxy-routes.ts); narrows the types.
    if (target.route.upstream === null || target.route.environment === null) throw new InternalError()
    const body = heldJsonOf(request)
    const claim = request.idempotency
    const reference = readReference(body, request.headers['content-encoding'], keyPointer)
    if (claim === null || reference.kind !== 'found' || body === null) {
      request.log.warn({ caller: caller.id, code: 'EXTERNAL_REFERENCE_REQUIRED' }, 'request to be held has no reference')
      throw new ExternalReferenceRequiredError(`A request that waits for approval needs a non-empty string reference at ${keyPointer}`)
    }
    const nowMs = clock.wallMs()
    const paymentId = plannedPaymentId(request)
    const unsealed: Omit<ApprovalRecord, 'holdSeal'> = {
      id: newApprovalId(),
      key: claim.key,
      fingerprint: claim.fingerprint,
      status: 'pending',
      caller: caller.id,
      environment: target.route.environment,
      interface: target.route.interface,
      method: request.method,
      path: target.path,
      upstreamUrl: `${target.route.upstream.origin}${target.route.upstream.basePath}`,
      query: target.query,
      headers: storedHeaders(request),
      body: body.bytes,
      amount: hold.amount,
      currency: hold.currency,
      externalReference: reference.reference,
      createdAtMs: nowMs,
      expiresAtMs: nowMs + ttlMs,
      reservations: (request.amountReservations ?? []).map((r) => ({ key: r.key, units: r.units.toString() })),
      ...(duplicateOf === null ? {} : { duplicateOf }),
      ...(paymentId === undefined ? {} : { paymentId }),
      decidedBy: null,
      decidedByCaller: null,
      reason: null,
      decidedAtMs: null,
      forward: 'none',
      decisionSeal: null,
      forwardSeal: null,
    }
    const approval: ApprovalRecord = { ...unsealed, holdSeal: sealHold(verifier.key, unsealed) }
    try {
      await state.markHeld(claim.key, heldMarkTtlMs(approval, nowMs, retentionMs))
      await store.create(approval)
    } catch (err) {
      // 503 with STATE_UNAVAILABLE: the amount step gives the reservation back.
      throw new StateUnavailableError(err)
    }
    metrics.step(caller.id, 'held')
    request.log.info({ caller: caller.id, approval: approval.id, amount: approval.amount, currency: approval.currency }, 'request held for approval')
    if (notifier !== null) {
      // The hold stands without it: the approval is listed, and a person can still decide.
      const stored = await notifier.notify('approval.requested', approvalView(approval, nowMs)).catch((err: unknown) => {
        request.log.error({ caller: caller.id, approval: approval.id, err }, 'approval notification could not be stored')
        return false
      })
      if (stored) metrics.step(caller.id, 'notified')
    }
    await dropMark(request, state, claim)
    answerHeld(reply, approval, nowMs)
  }
}, { name: 'approval-holds', dependencies: ['amount-limits'] })

/** The headers as they would be forwarded (header-policy.ts), less those the forwarder sets itself. */
function storedHeaders (request: FastifyRequest): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(buildUpstreamHeaders(request.headers, '', String(request.id)))) {
    if (value !== undefined && !NOT_STORED.has(name)) out[name] = value
  }
  return out
}
