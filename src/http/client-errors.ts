/**
 * Requests that never reach a route (SPEC §5): a malformed request line or framing, headers over
 * Node's limit, a request not received in time, an `Expect` the proxy cannot meet. Each gets the
 * contract's JSON with `x-proxy-error` and `Connection: close`, a `warn` line with the client's
 * address and the parser's reason (never the bytes), and a lingering close so the client reads it.
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Logger } from 'pino'
import { BadRequestError, ExpectationFailedError, HeadersTooLargeError, RequestTimeoutError, type ProxyError } from '../errors.js'
import { lingerAfterResponse, lingerAndClose, type LingerBounds } from './lingering-close.js'

interface ParserError extends Error { code?: string, reason?: string }

/** Told of every answer written here, outside Fastify, so that it is counted like the others. */
export type AnswerObserver = (error: ProxyError) => void

/** Pure: which of our errors a node:http client error is, or null when there is no one to answer. */
export function clientErrorFor (err: ParserError): ProxyError | null {
  if (err.code === 'ECONNRESET' || err.code === 'EPIPE') return null
  if (err.code === 'HPE_HEADER_OVERFLOW') return new HeadersTooLargeError('the request headers exceed the server\'s limit (16 KiB)')
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new RequestTimeoutError()
  return new BadRequestError('the request line, headers or framing could not be parsed')
}

export function contractResponse (error: ProxyError): string {
  const body = JSON.stringify(error.toJSON())
  return `HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\nx-proxy-error: ${error.code}\r\ncache-control: no-store\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
}

/** Fastify's `clientErrorHandler` (it replaces Fastify's bare answer, logged only at trace). */
export function createClientErrorHandler (log: Logger, bounds: LingerBounds, answered: AnswerObserver) {
  return function onClientError (err: ParserError, socket: Socket): void {
    const error = clientErrorFor(err)
    // An answer already started on this socket cannot be followed by another one.
    const started = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true
    if (error === null || socket.destroyed || !socket.writable || started) {
      socket.destroy()
      return
    }
    log.warn({ code: error.code, parserCode: err.code, parserReason: err.reason, remoteAddress: socket.remoteAddress }, 'malformed request refused')
    answered(error)
    lingerAndClose(socket, bounds, contractResponse(error))
  }
}

/** Node's 'checkExpectation': any `Expect` but `100-continue` gets 417 in the contract shape. */
export function createExpectationHandler (log: Logger, bounds: LingerBounds, answered: AnswerObserver) {
  return function onCheckExpectation (req: IncomingMessage, res: ServerResponse): void {
    const error = new ExpectationFailedError()
    log.warn({ code: error.code, remoteAddress: req.socket.remoteAddress }, 'request refused: unsupported Expect')
    answered(error)
    lingerAfterResponse(req.socket, bounds)
    const body = JSON.stringify(error.toJSON())
    res.writeHead(error.statusCode, {
      'content-type': 'application/json; charset=utf-8', 'x-proxy-error': error.code, 'cache-control': 'no-store', connection: 'close', 'content-length': Buffer.byteLength(body),
    })
    res.end(body)
  }
}
