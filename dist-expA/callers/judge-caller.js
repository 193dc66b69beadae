/**
 * Who is calling and may it do this (SPEC §7: identity, then `allow`), as a pure decision over the
 * loaded callers and the facts of one request, so every branch is table-tested without sockets.
 */
import { hash } from 'node:crypto';
import { blockListOf, peerIn } from '../config/network-lists.js';
export function indexCallers(callers) {
    const byKey = new Map();
    const keyless = [];
    for (const spec of callers) {
        const sources = spec.sources === null ? null : blockListOf(spec.sources);
        if (spec.keySha256 !== null)
            byKey.set(spec.keySha256, { spec, sources });
        else if (sources !== null)
            keyless.push({ spec, sources });
    }
    return { byKey, keyless };
}
export function keySha256(key) {
    return hash('sha256', key);
}
const BEARER = /^bearer +(\S+) *$/i;
export function identify(index, facts) {
    if (facts.authorizations.length > 1)
        return 'more than one Authorization header';
    const [authorization] = facts.authorizations;
    if (authorization !== undefined) {
        const key = BEARER.exec(authorization)?.[1];
        if (key === undefined)
            return 'Authorization is not "Bearer <caller key>"';
        // A presented key that matches no caller is refused, never downgraded to a key-less caller.
        const entry = index.byKey.get(keySha256(key));
        if (entry === undefined)
            return 'unknown caller key';
        if (entry.sources !== null && !peerIn(entry.sources, facts.peer))
            return 'caller key used from outside its sources';
        return entry.spec;
    }
    const keyless = index.keyless.find((c) => peerIn(c.sources, facts.peer));
    return keyless?.spec ?? 'no caller key';
}
export function isPermitted(caller, facts) {
    return caller.allow.some((rule) => (facts.environment === null ? rule.environments.size === 2 : rule.environments.has(facts.environment)) &&
        rule.interfaces.has(facts.interface) &&
        rule.methods.has(facts.method) &&
        (rule.paths === null || rule.paths(facts.path)));
}
export function judgeCaller(index, facts) {
    const caller = identify(index, facts);
    if (typeof caller === 'string')
        return { kind: 'unauthenticated', reason: caller };
    return isPermitted(caller, facts) ? { kind: 'permitted', caller } : { kind: 'not-permitted', caller };
}
//# sourceMappingURL=judge-caller.js.map