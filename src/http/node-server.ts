/**
 * The node:http server under Fastify, with the timeouts that defend against slow clients, the
 * answers Node would otherwise write bare (CONNECT, `Expect`), and `100 Continue` sent only when a
 * route actually reads the body, so a body over the limit is refused before it is uploaded.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import type { Logger } from 'pino'
import { MethodNotAllowedError } from '../errors.js'
import { createExpectationHandler, type AnswerObserver } from './client-errors.js'
import { awaitContinue } from '../routing/request-body.js'
import { DEFAULT_LINGER, type LingerBounds } from './lingering-close.js'

/** Slowloris defence: a client has this long to send its headers, and this long for the whole request. */
export const HEADERS_TIMEOUT_MS = 10_000
export const REQUEST_TIMEOUT_MS = 30_000
/** How often Node checks the two timeouts above (its default of 30 s lets a slow client linger). */
const CONNECTIONS_CHECK_INTERVAL_MS = 1_000
/** How long a refused CONNECT's socket stays open for a client that does not read the answer. */
const CONNECT_ANSWER_TIMEOUT_MS = 5_000

export interface HttpEdgeSettings {
  headersTimeoutMs: number
  requestTimeoutMs: number
  linger: LingerBounds
}

export const DEFAULT_HTTP_EDGES: HttpEdgeSettings = {
  headersTimeoutMs: HEADERS_TIMEOUT_MS,
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
  linger: DEFAULT_LINGER,
}

export function createNodeServer (
  handler: RequestListener,
  log: Logger,
  settings: HttpEdgeSettings = DEFAULT_HTTP_EDGES,
  answered: AnswerObserver = () => {},
): Server {
  const server = createServer({
    headersTimeout: settings.headersTimeoutMs,
    requestTimeout: settings.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(CONNECTIONS_CHECK_INTERVAL_MS, settings.headersTimeoutMs),
    // Node's own answer to a Host-less HTTP/1.1 request is a bare 400; request-refusal.ts answers it in our shape.
    requireHostHeader: false,
  }, handler)
  server.on('connect', (req: IncomingMessage, socket: Duplex) => { refuseConnect(req, socket, log, answered) })
  // With a listener, Node sends no automatic 100 Continue: the route decides (body-limit and access checks first).
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    awaitContinue(req, res)
    server.emit('request', req, res)
  })
  server.on('checkExpectation', createExpectationHandler(log, settings.linger, answered))
  return server
}

/**
 * CONNECT never reaches Fastify: Node hands it to 'connect' listeners, or without one closes the
 * socket with no answer at all. It gets the 405 TRACE gets (BAD_INPUTS: 4xx, no tunnel).
 */
function refuseConnect (req: IncomingMessage, socket: Duplex, log: Logger, answered: AnswerObserver): void {
  // Node no longer tracks the socket it hands over: not its error listener, timeouts or
  // closeAllConnections(). So it is closed here, whole, once the answer is out (or after a few
  // seconds if the client does not read it), and whatever the client sends meanwhile is discarded.
  socket.on('error', () => {})
  socket.resume()
  const deadline = setTimeout(() => { socket.destroy() }, CONNECT_ANSWER_TIMEOUT_MS)
  deadline.unref()
  socket.once('close', () => { clearTimeout(deadline) })
  log.warn({ method: req.method, remoteAddress: req.socket.remoteAddress }, 'CONNECT refused: the proxy opens no tunnels')
  const error = new MethodNotAllowedError('CONNECT')
  answered(error)
  const body = JSON.stringify(error.toJSON())
  socket.end(`HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\nx-proxy-error: ${error.code}\r\ncache-control: no-store\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, () => { socket.destroy() })
}
