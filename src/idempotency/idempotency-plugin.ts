/**
 * SPEC §8 as a root-level plugin: asks proxy routes to hold POST/PUT/PATCH bodies, then, before the
 * route's token lookup, claims the request's record key. A recorded answer with the same
 * fingerprint is replayed (`Idempotent-Replayed: true`), another fingerprint is 422, a claim in
 * flight is 409; nothing of these is forwarded. The claim is settled by the response recorder
 * (response-recorder.ts, called from the upstream response handler) or, when no answer is
 * recorded (proxy errors, a lost connection), dropped when the response closes.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { IdempotencyInProgressError, IdempotencyKeyReusedError, StateUnavailableError } from '../errors.js'
import { callerIdOf } from '../callers/caller.js'
import type { Config } from '../config/config.js'
import { heldJsonOf } from '../json/held-json.js'
import type { StateStore } from '../state/state-store.js'
import './idempotency-claim.js'
import { decideIdempotency, KEYED_METHODS } from './idempotency-decision.js'
import type { IdempotencyObserver } from './idempotency-metrics.js'
import { abort } from './response-recorder.js'

/** Added to the longest a forward can take, so a mark outlives its request and a crash frees it soon after. */
export const IN_FLIGHT_MARGIN_MS = 5000

/** The token wait, the upstream answer, and the one 401 retry (SPEC §5) all happen inside one claim. */
export function inFlightTtlMs (config: Pick<Config, 'upstream' | 'token'>): number {
  return (config.token.timeoutS + 2 * config.upstream.timeoutS) * 1000 + IN_FLIGHT_MARGIN_MS
}

export interface IdempotencyOptions {
  store: StateStore
  keyPointer: string
  /** How long an in-flight mark lives: longer than any forward (token wait, upstream, the 401 retry). */
  inFlightTtlMs: number
  observer: IdempotencyObserver
}

export const idempotency = fp(async function idempotency (app: FastifyInstance, options: IdempotencyOptions) {
  const { store, keyPointer, inFlightTtlMs, observer } = options
  app.decorateRequest('idempotency', null)

  app.addHook('onRequest', (request, _reply, done) => {
    if (request.target !== null && KEYED_METHODS.has(request.method)) request.holdBody = true
    done()
  })

  // Callback-style: requests that are not judged (most) cost no promise.
  app.addHook('preHandler', (request, reply, done) => {
    const target = request.target
    if (target === null || target.route.environment === null || !KEYED_METHODS.has(request.method)) { done(); return }
    const callerId = callerIdOf(request)
    const decision = decideIdempotency({
      method: request.method,
      callerId,
      environment: target.route.environment,
      iface: target.route.interface,
      path: target.folded,
      contentEncoding: request.headers['content-encoding'],
      body: heldJsonOf(request),
      keyPointer,
    })
    if (decision.kind === 'skip') { done(); return }
    if (decision.kind === 'refuse') {
      request.log.warn({ caller: callerId, code: decision.error.code }, 'idempotency reference refused')
      done(decision.error)
      return
    }
    store.claim(decision.key, inFlightTtlMs).then((outcome) => {
      if (outcome.kind === 'in-flight') {
        observer.outcome('in_flight')
        done(new IdempotencyInProgressError())
        return
      }
      if (outcome.kind === 'recorded') {
        if (outcome.record.fingerprint !== decision.fingerprint) {
          observer.outcome('reused')
          request.log.warn({ caller: callerId, code: 'IDEMPOTENCY_KEY_REUSED' }, 'idempotency reference reused with another body')
          done(new IdempotencyKeyReusedError())
          return
        }
        observer.outcome('replayed')
        // Answered here: the route's handler, and so the provider, is never reached.
        reply.code(outcome.record.status).headers(outcome.record.headers).header('idempotent-replayed', 'true').send(outcome.record.body)
        return
      }
      observer.outcome('claimed')
      const claim = {
        key: decision.key,
        owner: outcome.owner,
        fingerprint: decision.fingerprint,
        held: outcome.held,
        settled: false,
      }
      request.idempotency = claim
      // Whatever ends this response without a recorded answer (our 502/503/504, a lost connection)
      // frees the reference for a retry.
      reply.raw.once('close', () => { if (!claim.settled) abort(request, claim, store) })
      done()
    }, (err: unknown) => {
      observer.outcome('unavailable')
      done(err instanceof StateUnavailableError ? err : new StateUnavailableError())
    })
  })
}, { name: 'idempotency' })
