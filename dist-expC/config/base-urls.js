/**
 * Base URL checks and the sandbox derivation of SPEC §1: the sandbox path is the production path
 * with the segment `sandbox` inserted after `/api` (`/api/b2b` -> `/api/sandbox/b2b`).
 */
/** A base URL without trailing slash, query, fragment or userinfo: the proxy appends paths to it. */
export function checkBaseUrl(raw) {
    let url;
    try {
        url = new URL(raw);
    }
    catch {
        return { ok: false, problem: 'must be an absolute http(s) URL' };
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
        return { ok: false, problem: 'must use https (or http for local testing)' };
    if (url.username !== '' || url.password !== '')
        return { ok: false, problem: 'must not contain credentials' };
    if (url.search !== '' || url.hash !== '')
        return { ok: false, problem: 'must not contain a query or fragment' };
    const path = url.pathname.replace(/\/+$/, '');
    return { ok: true, url: `${url.origin}${path}` };
}
export function deriveSandboxBaseUrl(productionBase) {
    const url = new URL(productionBase);
    const match = /^\/api(\/.*)?$/.exec(url.pathname);
    if (match === null)
        return { ok: false, problem: 'cannot be derived: the production path does not start with /api' };
    return { ok: true, url: `${url.origin}/api/sandbox${match[1] ?? ''}` };
}
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Plain http to anything but this machine would send the token (and the API key) in clear text. */
export function isPlainHttpToRemote(base) {
    const url = new URL(base);
    return url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname) && !url.hostname.startsWith('127.');
}
//# sourceMappingURL=base-urls.js.map