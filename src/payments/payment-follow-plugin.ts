/**
 * SPEC §12 on the proxy's request path. A root-level preHandler, the last of the transaction checks
 * (after §8, the amount limits and §11's holds, so a replay, a 409 or 422, a refusal and a held
 * request create nothing), stores the intent of a followed POST before it is forwarded, 503
 * STATE_UNAVAILABLE when it cannot, and sets `Payment-Id` on the answer. The upstream tap
 * (`paymentTap`, wrapped around §8's recorder) reads the provider's answer: a small answer is read
 * whole before it is sent, and recorded by §8 with the headers it is sent with, so a replay carries
 * the same `Payment-Id`, and none when the record was dropped; a streamed answer without a usable
 * transaction id leaves the payment `unknown` (its `Payment-Id` is already sent). A response that
 * ends without an upstream answer (the proxy's own 502/504, a lost connection) leaves the payment
 * `unknown`, unless the proxy refused before sending anything; an error answer (the proxy's or the
 * provider's) is sent only once the payment has taken it in. A client that goes away before its answer aborts the
 * forward (routing/upstream-response.ts), so the payment is `unknown`: the provider may have acted.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { callerIdOf } from '../callers/caller.js'
import { StateUnavailableError } from '../errors.js'
import { plannedPaymentId } from '../objects/payment-id.js'
import { heldJsonOf } from '../json/held-json.js'
import { readReference } from '../json/reference.js'
import type { ResponseRecording, UpstreamResponseTap } from '../routing/upstream-response.js'
import type { ProviderAnswer } from './payment-machine.js'
import type { FollowedSend, PaymentFollower } from './payment-follower.js'
import { MAX_PROVIDER_BODY_BYTES } from './provider-reading.js'

export const PAYMENT_ID_HEADER = 'payment-id'

/** The proxy's own refusals that come before anything is sent upstream (after the intent was stored). */
const NOT_FORWARDED = new Set(['TOKEN_UNAVAILABLE', 'SHUTTING_DOWN', 'ENVIRONMENT_NOT_CONFIGURED', 'STATE_UNAVAILABLE'])

interface FollowedRequest extends FollowedSend {
  /** The answer (or its absence) was handed to the follower: nothing else may. */
  answered: boolean
  /** The follower's handling of an error answer, awaited before that answer is sent. */
  settling: Promise<void> | null
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when this request is followed (SPEC §12). */
    payment: FollowedRequest | null
  }
}

export interface PaymentFollowOptions {
  follower: PaymentFollower
  keyPointer: string
}

export const paymentFollow = fp(async function paymentFollow (app: FastifyInstance, options: PaymentFollowOptions) {
  const { follower, keyPointer } = options
  app.decorateRequest('payment', null)

  // Callback-style: requests that are not followed (most) cost no promise.
  app.addHook('preHandler', (request, reply, done) => {
    const claim = request.idempotency
    const target = request.target
    if (claim === null ||
      target === null ||
      target.route.environment === null ||
      !follower.follows(request.method, target.folded)) { done(); return }
    const body = heldJsonOf(request)
    const reference = readReference(body, request.headers['content-encoding'], keyPointer)
    // Unreachable: §8 claimed the request, so its body holds the reference.
    if (body === null || reference.kind !== 'found') { done(); return }
    const caller = callerIdOf(request)
    follower.intent({
      key: claim.key,
      caller,
      environment: target.route.environment,
      interface: target.route.interface,
      method: request.method,
      path: target.path,
      folded: target.folded,
      reference: reference.reference,
      body,
      id: plannedPaymentId(request),
      counted: request.amountReservations?.map((r) => ({ key: r.key, units: r.units.toString() })),
    }).then((sent) => {
      const followed: FollowedRequest = { ...sent, answered: false, settling: null }
      request.payment = followed
      reply.header(PAYMENT_ID_HEADER, sent.id)
      reply.raw.once('close', () => {
        if (followed.answered) return
        followed.answered = true
        void follower.answered(followed, withoutAnswer(reply))
      })
      done()
    }, (err: unknown) => {
      request.log.warn({ caller, code: 'STATE_UNAVAILABLE' }, 'payment intent not stored: the request is not forwarded')
      done(err instanceof StateUnavailableError ? err : new StateUnavailableError(err))
    })
  })

  // The proxy's own error answer (502, 504, ...) is sent only once the payment says what it means,
  // so a caller that asks right after its 502 finds the payment `unknown`, not still `sending`.
  // The same for the provider's own error answer (a 5xx): an immediate retry then finds the payment
  // as that answer left it, not still `sending`.
  app.addHook('onSend', (request, reply, payload, done) => {
    const followed = request.payment
    if (followed === null) { done(null, payload); return }
    const sent = (): void => { done(null, payload) }
    if (followed.settling !== null) { followed.settling.then(sent, sent); return }
    if (followed.answered || reply.getHeader('x-proxy-error') === undefined) { sent(); return }
    followed.answered = true
    const answer = withoutAnswer(reply)
    // Refused before anything was sent (no token, shutting down): a new record is dropped, and the
    // refusal must not name it.
    if (followed.fresh && answer.kind === 'not-forwarded') reply.removeHeader(PAYMENT_ID_HEADER)
    follower.answered(followed, answer).then(sent, sent)
  })
}, { name: 'payment-follow', dependencies: ['idempotency'] })

/** Why a followed response ended without the provider's answer reaching it. */
function withoutAnswer (reply: FastifyReply): ProviderAnswer {
  const code = reply.getHeader('x-proxy-error')
  return typeof code === 'string' && NOT_FORWARDED.has(code) ? { kind: 'not-forwarded' } : { kind: 'lost' }
}

/** §8's recorder (`inner`) with the provider's answer read for the payment on the way. */
export function paymentTap (follower: PaymentFollower, inner: UpstreamResponseTap | undefined): UpstreamResponseTap {
  return function tap (request, reply, status) {
    const followed = request.payment
    if (followed === null || followed.answered) return inner?.(request, reply, status) ?? null
    followed.answered = true
    const fresh = followed.fresh
    if (status < 200 || status >= 300) {
      const answer = follower.read(status, null, undefined)
      // A 4xx drops a new record: its answer must not name it (nor its replay).
      if (fresh && answer.kind === 'refused') reply.removeHeader(PAYMENT_ID_HEADER)
      followed.settling = follower.answered(followed, answer)
      return inner?.(request, reply, status) ?? null
    }
    const recording = inner?.(request, reply, status) ?? null
    if (recording === null) {
      // Unreachable (a 2xx of a claimed request is recorded); the transaction may exist.
      void follower.answered(followed, { kind: 'lost' })
      return null
    }
    const encoding = reply.getHeader('content-encoding') as string | string[] | undefined
    return readingRecording(recording, (body, sending) => {
      const answer = follower.read(status, body, encoding)
      if (!fresh || answer.kind !== 'untracked') return follower.answered(followed, answer)
      if (sending) {
        reply.removeHeader(PAYMENT_ID_HEADER)
        return follower.answered(followed, answer)
      }
      // Streamed: its Payment-Id went out with its headers and §8 recorded them, so the record
      // stays, as a forward whose answer could not be read: unknown, until an event names its
      // reference or a person settles it.
      request.log.warn({ payment: followed.id, caller: followed.record.caller, reference: followed.record.externalReference, path: followed.record.path, reason: answer.reason }, 'payment unknown: the provider\'s streamed answer has no usable transaction id')
      return follower.answered(followed, { kind: 'lost' })
    }, () => follower.answered(followed, { kind: 'lost' }))
  }
}

/**
 * A body held whole is read before it is sent (`sending`: its headers may still change) and
 * recorded alongside; a streamed one is read as it passes, up to the bound, once it has ended.
 */
function readingRecording (
  recording: ResponseRecording,
  onBody: (body: Buffer | null, sending: boolean) => Promise<void>,
  onBroken: () => Promise<void>,
): ResponseRecording {
  return {
    async whole (body) {
      const read = onBody(body, true)
      await Promise.all([read, recording.whole(body)])
    },
    stream (upstream) {
      const chunks: Buffer[] = []
      let size = 0
      upstream.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size <= MAX_PROVIDER_BODY_BYTES) chunks.push(chunk)
      })
      upstream.once('end', () => { void onBody(size <= MAX_PROVIDER_BODY_BYTES ? Buffer.concat(chunks, size) : null, false) })
      upstream.once('error', () => { void onBroken() })
      return recording.stream(upstream)
    },
    failed () {
      recording.failed()
      void onBroken()
    },
  }
}
