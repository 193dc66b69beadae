/**
 * Records a definitive upstream answer while it streams to the client (SPEC §8): every chunk goes
 * on to the client as it arrives (backpressure respected, nothing read ahead of it), a copy is kept
 * up to a bound, and the client's response is ended only after the record is stored, so a retry
 * sent the moment the answer arrives, to any replica, finds it. A client that leaves mid-answer
 * does not stop the reading: the answer is still recorded for its retry.
 */
import { PassThrough } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { StateStore } from '../state/state-store.js'
import { headersToRecord, isRecordable } from './idempotency-decision.js'
import type { IdempotencyObserver } from './idempotency-metrics.js'
import type { IdempotencyClaim } from './idempotency-claim.js'

/** Answers with a body over this are passed through but not recorded (the mark is dropped). */
export const DEFAULT_RECORD_BODY_BYTES = 256 * 1024

export interface RecorderOptions {
  store: StateStore
  ttlMs: number
  maxBodyBytes: number
  observer: IdempotencyObserver
}

/** Returns the stream to send instead of `upstream`, or null when this answer is not recorded. */
export type ResponseRecorder = (request: FastifyRequest, reply: FastifyReply, status: number, upstream: NodeJS.ReadableStream) => NodeJS.ReadableStream | null

export function createResponseRecorder (options: RecorderOptions): ResponseRecorder {
  const { store, ttlMs, maxBodyBytes, observer } = options

  return function record (request, reply, status, upstream) {
    const claim = request.idempotency
    if (claim === null || claim.settled) return null
    claim.settled = true
    if (!isRecordable(status)) {
      observer.outcome('not_recorded')
      abort(request, claim, store)
      return null
    }
    const headers = headersToRecord(reply.getHeaders())
    const out = new PassThrough()
    const chunks: Buffer[] = []
    let size = 0
    let overflow = false

    upstream.on('data', (chunk: Buffer) => {
      if (!overflow) {
        size += chunk.length
        if (size > maxBodyBytes) {
          overflow = true
          chunks.length = 0
        } else {
          chunks.push(chunk)
        }
      }
      if (out.destroyed) return
      if (!out.write(chunk)) {
        upstream.pause()
        out.once('drain', () => upstream.resume())
      }
    })
    // The client left while the upstream was paused for it: read on, so the answer is recorded.
    out.once('close', () => { upstream.resume() })
    upstream.once('error', (err: Error) => {
      observer.outcome('not_recorded')
      abort(request, claim, store)
      out.destroy(err)
    })
    upstream.once('end', () => {
      if (overflow) {
        request.log.warn({ status, maxBodyBytes }, 'answer too large to record; a retry is forwarded again')
        observer.outcome('not_recorded')
        abort(request, claim, store)
        out.end()
        return
      }
      const body = Buffer.concat(chunks, size)
      store.finish(claim.key, claim.owner, { fingerprint: claim.fingerprint, status, headers, body }, ttlMs).then(() => {
        observer.outcome('recorded')
      }, () => {
        // The store said why, once per outage; the mark expires on its own.
        request.log.warn({ status }, 'answer not recorded: the state store is unavailable')
        observer.outcome('not_recorded')
      }).finally(() => { out.end() })
    })
    return out
  }
}

/** Drops this request's in-flight mark, so a retry is forwarded again. */
export function abort (request: FastifyRequest, claim: IdempotencyClaim, store: StateStore): void {
  claim.settled = true
  // A failed abort leaves a mark that expires on its own; the store logged the outage.
  store.abort(claim.key, claim.owner).catch(() => {
    request.log.warn('in-flight mark not dropped: the state store is unavailable; it expires on its own')
  })
}
