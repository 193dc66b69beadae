/**
 * The one undici dispatcher every outbound call goes through: token requests, proxied requests and
 * the egress IP check. Sharing it makes "the egress IP we report is the one upstreams see" a fact
 * of the structure (same pools, same address family), not a promise.
 */
import { Agent } from 'undici'
import type { Config } from '../config/config.js'

/** Idle upstream sockets are closed before typical server keep-alive timeouts (nginx 75 s, Node 5 s). */
const KEEP_ALIVE_TIMEOUT_MS = 4_000
const MAX_CONNECT_TIMEOUT_MS = 10_000

export function createDispatcher (config: Pick<Config, 'upstream'>): Agent {
  const timeoutMs = config.upstream.timeoutS * 1000
  return new Agent({
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
