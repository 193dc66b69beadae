/**
 * The node:http server under a listener that proxies nothing (the console's; the inbox has its
 * own of the same shape): the slow-client timeouts, and an `Expect` it cannot meet answered in the
 * contract's shape. Such a listener never waits for a body before deciding, so it sends no
 * `100 Continue` logic of its own: Node's automatic one is right.
 */
import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http'
import type { Logger } from 'pino'
import { createExpectationHandler, type AnswerObserver } from './client-errors.js'
import type { LingerBounds } from './lingering-close.js'

export interface ListenerTimeouts { headersMs: number, requestMs: number }

/** Slow clients: headers within 10 s, the whole request within 30 s (as the proxy's listener). */
export const LISTENER_TIMEOUTS: ListenerTimeouts = { headersMs: 10_000, requestMs: 30_000 }

/** A listener's node:http options: the slow-client timeouts, checked at least once a second; no Host required. */
export function listenerServerOptions (timeouts: ListenerTimeouts): ServerOptions {
  return {
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs),
    requireHostHeader: false,
  }
}

export function createListenerServer (
  handler: RequestListener,
  log: Logger,
  linger: LingerBounds,
  timeouts: ListenerTimeouts,
  answered: AnswerObserver = () => {},
): Server {
  const server = createServer(listenerServerOptions(timeouts), handler)
  server.on('checkExpectation', createExpectationHandler(log, linger, answered))
  return server
}
