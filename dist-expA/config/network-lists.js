/** Parsing of the comma-separated address settings (CIDRs, host names, IPs). */
import { BlockList, isIP } from 'node:net';
export function splitList(value) {
    return value.split(',').map((s) => s.trim()).filter((s) => s !== '');
}
/** `10.0.0.0/8`, `::1/128`, or a bare address meaning a single host. */
export function parseCidr(text) {
    const [address = '', prefixText, extra] = text.split('/');
    if (extra !== undefined)
        return null;
    const version = isIP(address);
    if (version === 0)
        return null;
    const max = version === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? max : Number(prefixText);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (prefixText !== undefined && !/^\d+$/.test(prefixText)))
        return null;
    return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}
const HOSTNAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;
/** A Host header name without port: a DNS name, an IPv4 address or a bracketed IPv6 address. */
export function isHostName(text) {
    if (text.startsWith('[') && text.endsWith(']'))
        return isIP(text.slice(1, -1)) === 6;
    return isIP(text) === 4 || HOSTNAME.test(text);
}
/** The CIDRs as a node:net BlockList, built once per list. */
export function blockListOf(cidrs) {
    const list = new BlockList();
    for (const cidr of cidrs)
        list.addSubnet(cidr.address, cidr.prefix, cidr.family);
    return list;
}
/** Whether a socket's peer address is in `list`; `::ffff:10.0.0.1` (an IPv4 peer on a dual-stack socket) counts as `10.0.0.1`. */
export function peerIn(list, peer) {
    const address = peer.startsWith('::ffff:') && peer.includes('.') ? peer.slice(7) : peer;
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}
//# sourceMappingURL=network-lists.js.map