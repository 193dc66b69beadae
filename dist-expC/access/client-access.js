/**
 * Who may use the proxy (SPEC §5 "Browser-safe", "Inbound access"). Anyone who can reach the
 * sidecar can move the company's money, so three checks run before anything is forwarded:
 * - the socket's peer address must be in PROXY_ALLOWED_CLIENTS (never a forwarded header);
 * - no browser context: an `Origin` header, or `Sec-Fetch-Site` other than `none`, means a web
 *   page is making the request (cross-site POST);
 * - the `Host` must be a name the operator expects, which defeats DNS rebinding (a page whose
 *   own name now resolves to 127.0.0.1 still sends its own name as Host).
 */
import { LRUCache } from 'lru-cache';
import { isIP } from 'node:net';
import { blockListOf, peerIn } from '../config/network-lists.js';
const PEER_CACHE_SIZE = 1024;
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARD_BINDS = new Set(['0.0.0.0', '::']);
export function createClientAccess(config) {
    const clients = blockListOf(config.access.allowedClients);
    const hosts = new Set([...LOOPBACK_NAMES, ...config.access.allowedHosts]);
    if (!WILDCARD_BINDS.has(config.listen.host))
        hosts.add(isIP(config.listen.host) === 6 ? `[${config.listen.host}]` : config.listen.host);
    // BlockList.check() builds a SocketAddress per call; a sidecar sees a handful of peers, and the
    // LRU bound keeps a scan of many addresses from growing the cache.
    const peers = new LRUCache({ max: PEER_CACHE_SIZE });
    return {
        check(remoteAddress, headers) {
            const address = remoteAddress ?? '';
            let allowed = peers.get(address);
            if (allowed === undefined) {
                allowed = peerIn(clients, address);
                peers.set(address, allowed);
            }
            if (!allowed)
                return { ok: false, reason: 'client address is not in PROXY_ALLOWED_CLIENTS' };
            if (headers.origin !== undefined)
                return { ok: false, reason: 'requests from web pages (Origin header) are refused' };
            const site = headers['sec-fetch-site'];
            if (site !== undefined && site !== 'none')
                return { ok: false, reason: 'requests from web pages (Sec-Fetch-Site) are refused' };
            const host = hostName(headers.host);
            if (host === null || !hosts.has(host))
                return { ok: false, reason: 'Host is not an allowed name: add it to PROXY_ALLOWED_HOSTS' };
            return { ok: true };
        },
    };
}
/** The name part of a Host header, lower-cased: `Example:8080` -> `example`, `[::1]:80` -> `[::1]`. */
function hostName(value) {
    if (typeof value !== 'string' || value === '')
        return null;
    const lower = value.toLowerCase();
    if (lower.startsWith('[')) {
        const end = lower.indexOf(']');
        return end === -1 ? null : lower.slice(0, end + 1);
    }
    const colon = lower.indexOf(':');
    return colon === -1 ? lower : lower.slice(0, colon);
}
//# sourceMappingURL=client-access.js.map