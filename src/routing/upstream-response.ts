/**
 * What happens to an upstream response before it streams back to the client:
 * - a 401 drops the token it rejected and, when SPEC §5 says a retry is safe, the request is sent
 *   once more with the replacement; otherwise the provider's 401 goes back as it came;
 * - a small error body is read to spot `IP_NOT_ALLOWED` and passed back byte for byte;
 * - an upstream that breaks off before the client got a byte becomes our 502/504, without the
 *   broken response's headers; once bytes are out, the client sees the stream cut.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { upstreamErrorFrom } from '../errors.js'
import type { TokenSource } from '../tokens/token-source.js'
import type { ProxyContext } from './proxy-context.js'
import { isRetrySafe } from './request-body.js'
import type { RouteSpec } from './route-table.js'

/** Error bodies up to this size are inspected; larger ones stream through untouched. */
export const INSPECTED_ERROR_BODY_BYTES = 8 * 1024

export interface UpstreamResponseObserver {
  ipNotAllowed(request: FastifyRequest, route: RouteSpec): void
}

interface RawResponse {
  statusCode: number
  headers: Record<string, string | string[] | undefined>
  stream: NodeJS.ReadableStream & { destroy(): void }
}

export interface UpstreamResponseHandlerOptions {
  route: RouteSpec
  source: TokenSource
  observer: UpstreamResponseObserver
  forward: (request: FastifyRequest, reply: FastifyReply) => void
}

export function createUpstreamResponseHandler (options: UpstreamResponseHandlerOptions) {
  const { route, source, observer, forward } = options

  return function onResponse (request: FastifyRequest, reply: FastifyReply, res: RawResponse): void {
    const ctx = request.proxy as ProxyContext
    if (res.statusCode === 401) {
      handleUnauthorized(request, reply, res, ctx)
      return
    }
    if (res.statusCode >= 400 && isSmall(res)) {
      inspectErrorBody(request, reply, res)
      return
    }
    reply.send(guarded(reply, res))
  }

  function handleUnauthorized (request: FastifyRequest, reply: FastifyReply, res: RawResponse, ctx: ProxyContext): void {
    const retry = ctx.attempt === 0 && isRetrySafe(request.method, ctx.body)
    const replacement = source.replaceRejected(ctx.token)
    if (!retry) {
      request.log.warn({ retried: false }, 'upstream answered 401; token replaced for the next request')
      replacement.catch(() => {})
      reply.send(guarded(reply, res))
      return
    }
    replacement.then((replaced) => {
      const token = replaced ? source.peek() : null
      // The response side tells whether the client is gone: the request side reports destroyed
      // as soon as a body has been read in full, which would rule out every retry with a body.
      if (token === null || reply.raw.destroyed) {
        request.log.warn({ retried: false }, 'upstream answered 401 and no new token is available')
        reply.send(guarded(reply, res))
        return
      }
      // Discarding the 401 body: destroy() reports an abort error that nobody else listens for.
      res.stream.on('error', () => {})
      res.stream.destroy()
      for (const name of Object.keys(res.headers)) reply.removeHeader(name)
      ctx.token = token
      ctx.attempt = 1
      request.log.info('upstream answered 401; retrying once with a new token')
      forward(request, reply)
    }, () => { reply.send(guarded(reply, res)) })
  }

  function inspectErrorBody (request: FastifyRequest, reply: FastifyReply, res: RawResponse): void {
    const chunks: Buffer[] = []
    res.stream.on('data', (chunk: Buffer) => chunks.push(chunk))
    res.stream.once('error', (err) => {
      dropUpstreamHeaders(reply, res)
      reply.send(upstreamErrorFrom(err))
    })
    res.stream.once('end', () => {
      const body = Buffer.concat(chunks)
      if (body.includes('IP_NOT_ALLOWED')) observer.ipNotAllowed(request, route)
      reply.send(body)
    })
  }
}

/**
 * The upstream stream itself goes to Fastify, which hands an error raised before the first byte to
 * the error handler (mapped to 502/504 there) and destroys the upstream stream when the client goes
 * away. This listener runs first, so the broken response's headers are gone when the error is
 * answered. (A PassThrough with pipeline() per response cost a third of the proxy's throughput.)
 */
function guarded (reply: FastifyReply, res: RawResponse): NodeJS.ReadableStream {
  res.stream.once('error', () => { if (!reply.raw.headersSent) dropUpstreamHeaders(reply, res) })
  return res.stream
}

function dropUpstreamHeaders (reply: FastifyReply, res: RawResponse): void {
  for (const name of Object.keys(res.headers)) {
    reply.removeHeader(name)
    reply.raw.removeHeader(name)
  }
}

function isSmall (res: RawResponse): boolean {
  const length = Number(res.headers['content-length'])
  return Number.isFinite(length) && length <= INSPECTED_ERROR_BODY_BYTES
}
