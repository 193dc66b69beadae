/**
 * What happens to an upstream response on its way back to the client:
 * - a 401 drops the token it rejected and, when SPEC §5 says a retry is safe, the request is sent
 *   once more with the replacement; otherwise the provider's 401 goes back as it came;
 * - the first bytes of an error body (401 included; decoded first when gzip, deflate or br) are
 *   searched for `IP_NOT_ALLOWED` as they stream past; the body goes back byte for byte;
 * - a small body of declared length, as nearly all of this API's JSON answers are, is held until
 *   complete and sent as one Buffer; anything else streams through as it arrives (SPEC §3);
 * - an upstream that breaks off before the client got a byte becomes our 502/504, without the
 *   broken response's headers; once bytes are out, the client sees the stream cut.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { upstreamErrorFrom } from '../errors.js'
import { heldJsonOf } from '../json/held-json.js'
import type { TokenSource } from '../tokens/token-source.js'
import { createDecodingScan, createMarkerScan, type MarkerScan } from './marker-scan.js'
import type { ProxyContext } from './proxy-context.js'
import { isRetrySafe } from './request-body.js'
import type { RouteSpec } from './route-table.js'

/** How much of an error body is searched for `IP_NOT_ALLOWED`. */
export const INSPECTED_ERROR_BODY_BYTES = 8 * 1024

/**
 * Bodies of declared length up to this size are held until complete and sent as one Buffer instead
 * of piping a stream: a break in the middle becomes our 502, and one write of a Buffer costs less
 * than a pipe (docs/performance.md).
 */
export const WHOLE_BODY_BYTES = 16 * 1024

export interface UpstreamResponseObserver {
  ipNotAllowed(request: FastifyRequest, route: RouteSpec): void
}

/**
 * Sees the answer that goes to the client (after any 401 retry): the idempotency layer records it
 * (SPEC §8) through the recording it returns, or null when the answer is not recorded.
 */
export type UpstreamResponseTap = (
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
) => ResponseRecording | null

export interface ResponseRecording {
  /** A body held whole anyway (sendWhenWhole): resolves once recorded (or given up), before it is sent. */
  whole(body: Buffer): Promise<void>
  /** A streamed body: returns the stream to send in its place, which ends once the record is stored. */
  stream(upstream: NodeJS.ReadableStream): NodeJS.ReadableStream
  /** The upstream broke off: nothing to record. */
  failed(): void
}

interface RawResponse {
  statusCode: number
  headers: Record<string, string | string[] | undefined>
  stream: NodeJS.ReadableStream & { destroy(): void, readonly destroyed: boolean, readonly errored: Error | null }
}

export interface UpstreamResponseHandlerOptions {
  route: RouteSpec
  source: TokenSource
  observer: UpstreamResponseObserver
  forward: (request: FastifyRequest, reply: FastifyReply) => void
  /** Where a POST/PATCH body carries its reference (SPEC §5, PROXY_IDEMPOTENCY_KEY_POINTER). */
  referencePointer: string
  tap?: UpstreamResponseTap
}

export function createUpstreamResponseHandler (options: UpstreamResponseHandlerOptions) {
  const { route, source, observer, forward, referencePointer } = options
  const tap = options.tap ?? noTap

  return function onResponse (request: FastifyRequest, reply: FastifyReply, res: RawResponse): void {
    const ctx = request.proxy as ProxyContext
    if (res.statusCode === 401) {
      handleUnauthorized(request, reply, res, ctx)
      return
    }
    if (ctx.attempt > 0) source.retrySucceeded(ctx.token)
    relay(request, reply, res)
  }

  function relay (request: FastifyRequest, reply: FastifyReply, res: RawResponse): void {
    if (res.stream.destroyed) {
      // Broke off while a 401 waited for its replacement token: no event will come any more.
      answerBrokenUpstream(reply, res, res.stream.errored ?? new Error('upstream response ended before its body'))
      return
    }
    const scan = res.statusCode >= 400 ? errorBodyScan(res) : null
    const onMarker = scan === null ? noop : (): void => { observer.ipNotAllowed(request, route) }
    const length = bodyLength(request.method, res)
    const recording = tap(request, reply, res.statusCode)
    // Fastify would label a Buffer without Content-Type as application/octet-stream; a stream it leaves alone.
    if (length !== null && length > 0 && length <= WHOLE_BODY_BYTES && res.headers['content-type'] !== undefined) {
      sendWhenWhole(reply, res, length, scan, onMarker, recording)
      return
    }
    if (recording !== null) {
      // Streamed, never held whole: the tap ends the client's answer when it is done with it. The
      // tap reads the upstream itself (watch() leaves it paused for a pipe that will not come).
      if (scan !== null) {
        watch(res.stream, scan, onMarker)
        res.stream.resume()
      }
      // guarded() only for its listener: an upstream break before the first byte drops the headers.
      guarded(reply, res)
      reply.send(recording.stream(res.stream))
      return
    }
    streamThrough(reply, res, scan, onMarker)
  }

  function handleUnauthorized (
    request: FastifyRequest,
    reply: FastifyReply,
    res: RawResponse,
    ctx: ProxyContext,
  ): void {
    const retry = ctx.attempt === 0 && isRetrySafe(request.method, ctx.body, heldJsonOf(request), request.headers['content-encoding'], referencePointer)
    const replacement = source.replaceRejected(ctx.token)
    if (!retry) {
      request.log.warn({ retried: false }, 'upstream answered 401; token replaced for the next request')
      replacement.catch(() => {})
      relay(request, reply, res)
      return
    }
    replacement.then((replaced) => {
      const token = replaced ? source.peek() : null
      // The response side tells whether the client is gone: the request side reports destroyed
      // as soon as a body has been read in full, which would rule out every retry with a body.
      if (token === null || reply.raw.destroyed) {
        request.log.warn({ retried: false }, 'upstream answered 401 and no new token is available')
        relay(request, reply, res)
        return
      }
      // Discarding the 401 body: destroy() reports an abort error that nobody else listens for.
      res.stream.on('error', () => {})
      res.stream.destroy()
      dropUpstreamHeaders(reply, res)
      ctx.token = token
      ctx.attempt = 1
      request.log.info('upstream answered 401; retrying once with a new token')
      forward(request, reply)
    }, () => { relay(request, reply, res) })
  }
}

/**
 * The upstream stream itself goes to Fastify, which hands an error raised before the first byte to
 * the error handler (mapped to 502/504 there) and destroys the upstream stream when the client goes
 * away. This listener runs first, so the broken response's headers are gone when the error is
 * answered. (A PassThrough with pipeline() per response cost a third of the proxy's throughput.)
 */
function guarded (reply: FastifyReply, res: RawResponse): NodeJS.ReadableStream {
  res.stream.once('error', (err: Error & { code?: unknown }) => {
    if (!reply.raw.headersSent) dropUpstreamHeaders(reply, res)
    // A client that left first had the upstream stream destroyed for it: not the upstream's doing.
    // Fastify's own line for this is request logging, which is off here (request-audit.ts writes its own line).
    else if (!reply.raw.destroyed) reply.log.warn({ code: err.code }, 'upstream response broke off after its headers: the client sees it cut')
  })
  return res.stream
}

/** Our 502/504 for an upstream that broke off before the client got a byte, without its headers. */
function answerBrokenUpstream (reply: FastifyReply, res: RawResponse, err: Error): void {
  dropUpstreamHeaders(reply, res)
  reply.send(upstreamErrorFrom(err))
}

function dropUpstreamHeaders (reply: FastifyReply, res: RawResponse): void {
  for (const name of Object.keys(res.headers)) {
    reply.removeHeader(name)
    reply.raw.removeHeader(name)
  }
}

/**
 * Holds the body until it is complete, then Fastify sends it as one Buffer. Nearly always it came
 * with the headers in one read and goes out at once; when it trickles in, the client gets it at its
 * end rather than part by part. In exchange an upstream that breaks off in the middle of it is our
 * 502/504 rather than a 200 cut short (BAD_INPUTS: reset mid-response). A client that leaves
 * meanwhile releases the upstream, unless the answer is being recorded for its retry.
 */
function sendWhenWhole (
  reply: FastifyReply,
  res: RawResponse,
  length: number,
  scan: MarkerScan | null,
  onMarker: () => void,
  recording: ResponseRecording | null,
): void {
  // Gone already (a request whose body was read in full does not count as aborted, so reply-from
  // still calls us): its 'close' has fired, so the hold would never hear of it. Fastify releases
  // the upstream of a stream sent to a closed response (a recording reads it to its end).
  if (reply.raw.destroyed) {
    if (recording !== null) reply.send(recording.stream(res.stream))
    else streamThrough(reply, res, scan, onMarker)
    return
  }
  const stream = res.stream
  let decided = false
  const chunks: Buffer[] = []
  let received = 0
  const onClientGone = (): void => {
    // An answer being recorded is read to its end for the client's retry (SPEC §8).
    if (decided || recording !== null) return
    decided = true
    stream.destroy()
  }
  const decide = (): void => {
    decided = true
    reply.raw.removeListener('close', onClientGone)
  }
  // Stays on for the stream's life: once the body is out, an error is nobody's to answer, and an
  // error without a listener would be thrown.
  stream.on('error', (err: Error) => {
    if (decided) return
    decide()
    recording?.failed()
    answerBrokenUpstream(reply, res, err)
  })
  stream.on('data', (chunk: Buffer) => {
    if (decided) return
    chunks.push(chunk)
    received += chunk.length
    // undici checks the body against its declared length: more is an error, less ends in one.
    if (received < length) return
    decide()
    const body = chunks.length === 1 ? chunk : Buffer.concat(chunks, received)
    if (scan !== null && (scan.push(body) || scan.end())) onMarker()
    if (recording === null) {
      reply.send(body)
      return
    }
    // Stored before the client has it, so a retry sent the moment it arrives finds the record.
    // whole() never rejects: a store failure is logged there and the answer still goes out.
    void recording.whole(body).then(() => { if (!reply.raw.destroyed) reply.send(body) })
  })
  reply.raw.once('close', onClientGone)
}

function streamThrough (reply: FastifyReply, res: RawResponse, scan: MarkerScan | null, onMarker: () => void): void {
  if (scan !== null) watch(res.stream, scan, onMarker)
  reply.send(guarded(reply, res))
}

/** Feeds the body to the scan alongside Fastify's pipe, until the scan has seen enough. */
function watch (stream: RawResponse['stream'], scan: MarkerScan, onMarker: () => void): void {
  // Paused, so the listener below does not start the flow before Fastify pipes the stream.
  stream.pause()
  const onEnd = (): void => {
    if (scan.end()) onMarker()
  }
  const onData = (chunk: Buffer): void => {
    if (scan.push(chunk)) onMarker()
    if (scan.finished) {
      stream.removeListener('data', onData)
      stream.removeListener('end', onEnd)
    }
  }
  stream.on('data', onData)
  stream.once('end', onEnd)
}

/** The declared length of a body the response will carry, or null when none will follow or none is declared. */
function bodyLength (method: string, res: RawResponse): number | null {
  if (method === 'HEAD' || res.statusCode < 200 || res.statusCode === 204 || res.statusCode === 304) return null
  const value = res.headers['content-length']
  if (typeof value !== 'string') return null
  const length = Number(value)
  return Number.isSafeInteger(length) ? length : null
}

/** The search of an error body for `IP_NOT_ALLOWED`; null for an encoding it cannot read. */
function errorBodyScan (res: RawResponse): MarkerScan | null {
  const encoding = res.headers['content-encoding']
  if (typeof encoding !== 'string' && encoding !== undefined) return null
  if (encoding === undefined || encoding.trim().toLowerCase() === 'identity') return createMarkerScan('IP_NOT_ALLOWED', INSPECTED_ERROR_BODY_BYTES)
  return createDecodingScan('IP_NOT_ALLOWED', INSPECTED_ERROR_BODY_BYTES, encoding)
}

function noop (): void {}

function noTap (): null { return null }
