/**
 * The undici agents every outbound call goes through: one for proxied requests and the egress IP
 * check, one for token requests. Both are built from the same connect options, so "the egress IP we
 * report is the one upstreams see" holds for token requests too (same address family, same host).
 *
 * Token requests get an agent of their own: the token endpoint lives on the fiat host, and when
 * slow fiat calls hold every pooled connection a token request would queue behind them for up to
 * the upstream timeout (undici does not abort a request still waiting in the queue when its signal
 * fires), so a refresh would fail while the token endpoint itself is healthy. Its own pool also
 * gets the token timeout instead of the upstream one.
 */
import { Agent } from 'undici';
/** Idle upstream sockets are closed before typical server keep-alive timeouts (nginx 75 s, Node 5 s). */
const KEEP_ALIVE_TIMEOUT_MS = 4_000;
const MAX_CONNECT_TIMEOUT_MS = 10_000;
/** One token request per environment is ever in flight; two environments share the fiat host. */
export const TOKEN_LANE_CONNECTIONS = 2;
/** The options of both agents, as data: what a test checks and what createOutbound builds. */
export function agentOptions(config) {
    const pool = (timeoutMs, connections) => ({
        connections,
        keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
        keepAliveMaxTimeout: KEEP_ALIVE_TIMEOUT_MS * 4,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        // The provider's payout allowlist is IPv4 only: a dual-stack host must not egress over IPv6.
        connect: config.upstream.ipFamily === 'ipv4'
            ? { timeout: Math.min(timeoutMs, MAX_CONNECT_TIMEOUT_MS), family: 4, autoSelectFamily: false }
            : { timeout: Math.min(timeoutMs, MAX_CONNECT_TIMEOUT_MS) },
    });
    return {
        upstream: pool(config.upstream.timeoutS * 1000, config.upstream.connections),
        tokens: pool(config.token.timeoutS * 1000, TOKEN_LANE_CONNECTIONS),
    };
}
export function createOutbound(config) {
    const options = agentOptions(config);
    const upstream = new Agent(options.upstream);
    const tokens = new Agent(options.tokens);
    return {
        upstream,
        tokens,
        close: async () => { await Promise.all([upstream.close(), tokens.close()]); },
        destroy: async () => { await Promise.all([upstream.destroy(), tokens.destroy()]); },
    };
}
//# sourceMappingURL=outbound-agents.js.map