/**
 * The one undici dispatcher every outbound call goes through: token requests, proxied requests and
 * the egress IP check. Sharing it makes "the egress IP we report is the one upstreams see" a fact
 * of the structure (same pools, same address family), not a promise.
 *
 * Token requests get a lane of their own inside it: the token endpoint lives on the fiat host, and
 * when slow fiat calls hold every pooled connection a token request would queue behind them for up
 * to the upstream timeout (undici does not abort a request still waiting in the queue when its
 * signal fires), so a refresh would fail while the token endpoint itself is healthy. The lane has
 * the same connect options, so it leaves from the same address.
 */
import { Agent, type Dispatcher } from 'undici'
import { TOKEN_PATH, type Config } from '../config/config.js'

/** Idle upstream sockets are closed before typical server keep-alive timeouts (nginx 75 s, Node 5 s). */
const KEEP_ALIVE_TIMEOUT_MS = 4_000
const MAX_CONNECT_TIMEOUT_MS = 10_000
/** One token request per environment is ever in flight; two environments share the fiat host. */
const TOKEN_LANE_CONNECTIONS = 2

export function createDispatcher (config: Pick<Config, 'upstream'>): OutboundAgent {
  const timeoutMs = config.upstream.timeoutS * 1000
  return new OutboundAgent({
    connections: config.upstream.connections,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    keepAliveMaxTimeout: KEEP_ALIVE_TIMEOUT_MS * 4,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    // The provider's payout allowlist is IPv4 only: a dual-stack host must not egress over IPv6.
    connect: config.upstream.ipFamily === 'ipv4'
      ? { timeout: Math.min(timeoutMs, MAX_CONNECT_TIMEOUT_MS), family: 4, autoSelectFamily: false }
      : { timeout: Math.min(timeoutMs, MAX_CONNECT_TIMEOUT_MS) },
  })
}

export class OutboundAgent extends Agent {
  readonly #tokenLane: Agent

  constructor (options: Agent.Options) {
    super(options)
    this.#tokenLane = new Agent({ ...options, connections: TOKEN_LANE_CONNECTIONS })
  }

  override dispatch (options: Agent.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const isTokenRequest = options.method === 'POST' && options.path.split('?', 1)[0]?.endsWith(TOKEN_PATH) === true
    return isTokenRequest ? this.#tokenLane.dispatch(options, handler) : super.dispatch(options, handler)
  }

  // Always calls the base with a callback: without one it would call this.close() again.
  override close (): Promise<void>
  override close (callback: () => void): void
  override close (callback?: () => void): Promise<void> | void {
    const closed = Promise.all([
      new Promise<void>((resolve) => { super.close(() => resolve()) }),
      this.#tokenLane.close(),
    ]).then(() => {})
    if (callback === undefined) return closed
    void closed.then(callback)
  }

  override destroy (): Promise<void>
  override destroy (err: Error | null): Promise<void>
  override destroy (callback: () => void): void
  override destroy (err: Error | null, callback: () => void): void
  override destroy (errOrCallback?: Error | null | (() => void), callback?: () => void): Promise<void> | void {
    const err = typeof errOrCallback === 'function' ? null : errOrCallback ?? null
    const done = typeof errOrCallback === 'function' ? errOrCallback : callback
    const destroyed = Promise.all([
      new Promise<void>((resolve) => { super.destroy(err, () => resolve()) }),
      this.#tokenLane.destroy(err),
    ]).then(() => {})
    if (done === undefined) return destroyed
    void destroyed.then(done)
  }
}
