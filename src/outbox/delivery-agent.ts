/**
 * The undici agent deliveries go through, built like the proxy's outbound agents (src/outbound/):
 * pooled keep-alive connections closed before typical server keep-alive timeouts, bounded connect
 * and answer times. undici's dispatcher follows no redirect, so a 3xx is an answer, not a hop
 * (SPEC §10: redirects are not followed).
 */
import { Agent } from 'undici'

const KEEP_ALIVE_TIMEOUT_MS = 4_000
const MAX_CONNECT_TIMEOUT_MS = 10_000

export function createDeliveryAgent (timeoutMs: number, connections: number): Agent {
  return new Agent({
    connections,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    keepAliveMaxTimeout: KEEP_ALIVE_TIMEOUT_MS * 4,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: { timeout: Math.min(timeoutMs, MAX_CONNECT_TIMEOUT_MS) },
  })
}
