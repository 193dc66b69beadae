/**
 * Request bodies on their way upstream, never parsed or re-serialised. The http-proxy raw parser
 * skips Fastify's bodyLimit, so the limit is applied here:
 * - a declared Content-Length over the limit is refused (413) before any upstream connection;
 * - a body whose retry could be safe (SPEC §5: a 401 may be retried once) is held in memory,
 *   within the limit, so it can be sent twice;
 * - any other body streams through a counter that fails the upstream request as soon as the
 *   limit is crossed (chunked bodies have no length to check up front).
 */
import { Transform, type TransformCallback } from 'node:stream'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { BodyTooLargeError } from '../errors.js'
import type { HeldJson } from '../json/held-json.js'
import { readReference } from '../json/reference.js'

/** Methods whose request may be repeated after a 401 (RFC 9110 §9.2.2 idempotent methods). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'])
/** Methods that may be repeated only when the body carries the provider's idempotency key. */
const KEYED = new Set(['POST', 'PATCH'])

export type ProxiedBody = Buffer | Transform

/** Requests that sent `Expect: 100-continue` and have not been told to go on yet (http/node-server.ts). */
const awaitingContinue = new WeakMap<IncomingMessage, ServerResponse>()

export function awaitContinue (req: IncomingMessage, res: ServerResponse): void {
  awaitingContinue.set(req, res)
}

/** Sends the pending `100 Continue`, if any: called when the route starts reading the body. */
export function continueIfExpected (req: IncomingMessage): void {
  const res = awaitingContinue.get(req)
  if (res === undefined) return
  awaitingContinue.delete(req)
  res.writeContinue()
}

export function declaredLength (req: IncomingMessage): number | null {
  const value = req.headers['content-length']
  if (value === undefined) return null
  const n = Number(value)
  return Number.isSafeInteger(n) && n >= 0 ? n : null
}

/**
 * Whether a body of this request is held for a possible retry: when its method may be retried, it
 * has a type, and its size is declared or it is JSON, the only kind that can carry
 * a reference (SPEC §5), chunked or not. An untyped body always streams: reply-from would
 * JSON-encode a held body sent without a content type. A chunked upload of another type streams.
 */
export function shouldHoldBody (req: IncomingMessage): boolean {
  const method = req.method ?? ''
  const contentType = req.headers['content-type']
  if ((!IDEMPOTENT.has(method) && !KEYED.has(method)) || contentType === undefined) return false
  return declaredLength(req) !== null || isJson(contentType)
}

function isJson (contentType: string): boolean {
  const type = contentType.split(';', 1)[0]?.trim().toLowerCase() ?? ''
  return type === 'application/json' || type.endsWith('+json')
}

export function holdBody (payload: NodeJS.ReadableStream, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    payload.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        payload.removeAllListeners('data')
        reject(new BodyTooLargeError(limit))
        return
      }
      chunks.push(chunk)
    })
    payload.once('end', () => resolve(Buffer.concat(chunks, size)))
    payload.once('error', reject)
  })
}

export function limitStream (payload: NodeJS.ReadableStream, limit: number): Transform {
  let size = 0
  const counter = new Transform({
    transform (chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
      size += chunk.length
      if (size <= limit) {
        done(null, chunk)
        return
      }
      // The error aborts the upstream request. The rest of the body is read and discarded, as Node
      // does with any unread body: left paused, it would stall the connection until a timeout.
      payload.unpipe(counter)
      payload.resume()
      done(new BodyTooLargeError(limit))
    },
  })
  payload.once('error', (err: Error) => counter.destroy(err))
  return payload.pipe(counter)
}

/**
 * SPEC §5: a 401 is retried for GET, HEAD, OPTIONS, PUT, DELETE, and for POST/PATCH only when
 * the held JSON body carries a reference (a non-empty string at `referencePointer`), the provider's
 * idempotency key: the provider then recognises a duplicate instead of paying twice.
 */
export function isRetrySafe (
  method: string,
  body: ProxiedBody | null,
  json: HeldJson | null,
  contentEncoding: string | string[] | undefined,
  referencePointer: string,
): boolean {
  if (body !== null && !Buffer.isBuffer(body)) return false
  if (IDEMPOTENT.has(method)) return true
  if (!KEYED.has(method) || body === null) return false
  return readReference(json, contentEncoding, referencePointer).kind === 'found'
}
