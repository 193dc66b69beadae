/**
 * SPEC §16's probable-duplicate check on the proxy's request path: after §8 (a true retry with the
 * same reference is a replay and never gets here) and before the amount limits, so a refused
 * duplicate costs no amount. A followed POST's payout is read once (payout-reading.ts) and planned
 * in the match store under its match key, in the one atomic step that also answers the payouts
 * planned before it within the window; the payments say what became of each (payout-decision.ts
 * judges). A probable duplicate is refused here (409), or marked for the hold step after the amount
 * step, which holds it for a person. Once the answer is sent, an entry whose payout did not become
 * its planned payment (refused, dropped by a 4xx) is taken back; a payout held for a person keeps
 * it, and is sent as that payment once approved.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import { callerIdOf } from '../callers/caller.js'
import type { RefuseCaller } from '../callers/caller-refusals.js'
import type { Clock } from '../clock.js'
import { PaymentProbableDuplicateError, StateUnavailableError } from '../errors.js'
import { heldJsonOf } from '../json/held-json.js'
import { readReference } from '../json/reference.js'
import { planPaymentId } from '../objects/payment-id.js'
import { markProbableDuplicate, probableDuplicateOf } from '../objects/probable-duplicate.js'
import type { CanonicalPath } from '../routing/canonical-path.js'
import { applicableLimits, duplicateAnswer, isJudged, probableDuplicate, type KnownPayment } from './duplicate-decision.js'
import type { DuplicateMetrics } from './duplicate-metrics.js'
import type { MatchEntry, MatchStore } from './match-store.js'
import { matchKey, readPayout, type PayoutPointers } from './payout-reading.js'

/** What the check asks of the payments (SPEC §12), through their shared part. */
export interface FollowedPayments {
  follows: (method: string, folded: CanonicalPath) => boolean
  find: (id: string) => Promise<KnownPayment | null>
}

export interface DuplicatesOptions {
  store: MatchStore
  payments: FollowedPayments
  pointers: PayoutPointers
  windowMs: number
  /** How long a planned payout may be on its way to the payments' store (§8's in-flight time). */
  inFlightMs: number
  keyPointer: string
  clock: Clock
  /** Whether a person can be asked (SPEC §11 is on). */
  approvalsOn: boolean
  /** Logs and counts a refusal as the callers' rules do; null without a callers file. */
  refuse: RefuseCaller | null
  metrics: DuplicateMetrics
  log: Logger
}

const planned = new WeakMap<FastifyRequest, { match: string, entry: MatchEntry }>()

/** SPEC §11's answer to a request it holds: 202 naming the approval. */
function heldForApproval (reply: FastifyReply): boolean {
  const location = reply.getHeader('location')
  return reply.statusCode === 202 && typeof location === 'string' && location.startsWith('/approvals/')
}

export const duplicatesCheck = fp(async function duplicatesCheck (app: FastifyInstance, options: DuplicatesOptions) {
  const { store, payments, pointers, windowMs, inFlightMs, keyPointer, clock, approvalsOn, refuse, metrics } = options
  // Without a callers file every request is the anonymous caller's, judged with no amount limits.
  if (!app.hasRequestDecorator('callerSpec')) app.decorateRequest('callerSpec', null)

  app.addHook('preHandler', async (request) => {
    const target = request.target
    const caller = request.callerSpec
    if (request.idempotency === null || target === null || target.route.environment === null) return
    if (!payments.follows(request.method, target.folded)) return
    const applicable = applicableLimits(caller, target.folded)
    if (!isJudged(caller, applicable)) return
    const body = heldJsonOf(request)
    const payout = readPayout(body, request.headers['content-encoding'], pointers)
    const reference = readReference(body, request.headers['content-encoding'], keyPointer)
    if (payout === null || reference.kind !== 'found') return
    const callerId = callerIdOf(request)
    const owner = { caller: callerId, environment: target.route.environment, interface: target.route.interface }
    const match = matchKey(owner, payout)
    const nowMs = clock.wallMs()
    const entry: MatchEntry = { id: planPaymentId(request), reference: reference.reference, atMs: nowMs }
    let duplicateOf
    try {
      const earlier = await store.claim(match, entry, nowMs - windowMs, windowMs + inFlightMs)
      const others = earlier.filter((e) => e.reference !== entry.reference)
      const candidates = await Promise.all(others.map(async (e) => ({ entry: e, payment: await payments.find(e.id) })))
      duplicateOf = probableDuplicate(entry.reference, candidates, nowMs, inFlightMs)
      if (duplicateOf !== null) await store.remove(match, entry)
    } catch (err) {
      // Unchecked, a payout could be paid twice: nothing is forwarded.
      await store.remove(match, entry).catch(() => undefined)
      throw err instanceof StateUnavailableError ? err : new StateUnavailableError(err)
    }
    if (duplicateOf === null) {
      planned.set(request, { match, entry })
      return
    }
    request.log.warn(
      { caller: callerId, reference: entry.reference, duplicateOf: duplicateOf.id, state: duplicateOf.state },
      'probable duplicate payout: the same payout as an earlier one under another reference',
    )
    if (duplicateAnswer(applicable, payout.currency, approvalsOn) === 'hold') {
      markProbableDuplicate(request, duplicateOf)
      return
    }
    const error = new PaymentProbableDuplicateError(callerId, duplicateOf)
    throw refuse === null ? error : refuse(request, callerId, error)
  })

  app.addHook('onResponse', async (request, reply) => {
    const code = reply.getHeader('x-proxy-error')
    if (code === 'PAYMENT_PROBABLE_DUPLICATE') metrics(callerIdOf(request), 'refused')
    else if (reply.statusCode === 202 && probableDuplicateOf(request) !== null) metrics(callerIdOf(request), 'held')
    const own = planned.get(request)
    // Held for a person, the payout keeps its entry: once approved it is sent as the payment planned
    // (the approval carries the id), and a re-plan is matched with it.
    if (own === undefined || reply.getHeader('payment-id') === own.entry.id || heldForApproval(reply)) return
    await store.remove(own.match, own.entry).catch((err: unknown) => {
      // Kept, it names no payment: once its in-flight time is over it is passed over, never a duplicate.
      request.log.warn({ caller: callerIdOf(request), err }, 'payout match could not be taken back')
    })
  })
}, { name: 'duplicates-check', dependencies: ['idempotency'] })
