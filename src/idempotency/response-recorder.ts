/**
 * Records a definitive upstream answer while it streams to the client (SPEC §8): every chunk goes
 * on to the client as it arrives (backpressure respected, nothing read ahead of it), a copy is kept
 * up to a bound, and the client's response is ended only after the record is stored, so a retry
 * sent the moment the answer arrives, to any replica, finds it. A client that leaves mid-answer
 * does not stop the reading: the answer is still recorded for its retry. A small answer of
 * declared length, which the upstream response handler holds whole anyway, is stored before it is
 * sent, with no stream of ours in between.
 */
import { PassThrough } from 'node:stream'
import type { FastifyRequest } from 'fastify'
import type { StateStore } from '../state/state-store.js'
import { headersToRecord, isRecordable } from './idempotency-decision.js'
import type { IdempotencyObserver } from './idempotency-metrics.js'
import type { IdempotencyClaim } from './idempotency-claim.js'
import type { ResponseRecording, UpstreamResponseTap } from '../routing/upstream-response.js'

/** Answers with a body over this are passed through but not recorded (the mark is dropped). */
export const DEFAULT_RECORD_BODY_BYTES = 256 * 1024

export interface RecorderOptions {
  store: StateStore
  ttlMs: number
  maxBodyBytes: number
  observer: IdempotencyObserver
}

export function createResponseRecorder (options: RecorderOptions): UpstreamResponseTap {
  const { store, ttlMs, maxBodyBytes, observer } = options

  return function record (request, reply, status): ResponseRecording | null {
    const claim = request.idempotency
    if (claim === null || claim.settled) return null
    claim.settled = true
    if (!isRecordable(status)) {
      observer.outcome('not_recorded')
      abort(request, claim, store)
      return null
    }
    // A streamed answer's headers are sent now; a whole one's are read again when it is complete,
    // just before it is sent, so a change made meanwhile (payments' Payment-Id) is replayed as sent.
    const headers = headersToRecord(reply.getHeaders())

    const notRecorded = (): void => {
      observer.outcome('not_recorded')
      abort(request, claim, store)
    }
    const save = async (body: Buffer, headers: Record<string, string | string[]>): Promise<void> => {
      if (body.length > maxBodyBytes) {
        request.log.warn({ status, maxBodyBytes }, 'answer too large to record; a retry is forwarded again')
        notRecorded()
        return
      }
      try {
        await store.finish(claim.key, claim.owner, { fingerprint: claim.fingerprint, status, headers, body }, ttlMs)
        observer.outcome('recorded')
      } catch {
        // The store said why, once per outage; the mark expires on its own.
        request.log.warn({ status }, 'answer not recorded: the state store is unavailable')
        observer.outcome('not_recorded')
      }
    }

    return {
      whole: async (body) => { await save(body, headersToRecord(reply.getHeaders())) },
      failed: notRecorded,
      stream (upstream) {
        const out = new PassThrough()
        const chunks: Buffer[] = []
        let size = 0
        upstream.on('data', (chunk: Buffer) => {
          // Past the bound the copy is dropped; the client still gets every byte.
          if (size <= maxBodyBytes) chunks.push(chunk)
          size += chunk.length
          if (out.destroyed) return
          if (!out.write(chunk)) {
            upstream.pause()
            out.once('drain', () => upstream.resume())
          }
        })
        // The client left while the upstream was paused for it: read on, so the answer is recorded.
        out.once('close', () => { upstream.resume() })
        upstream.once('error', (err: Error) => {
          notRecorded()
          out.destroy(err)
        })
        upstream.once('end', () => {
          const body = size > maxBodyBytes ? Buffer.alloc(maxBodyBytes + 1) : Buffer.concat(chunks, size)
          void save(body, headers).finally(() => { out.end() })
        })
        return out
      },
    }
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
