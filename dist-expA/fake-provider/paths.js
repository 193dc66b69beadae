/**
 * Where each environment lives on the two provider hosts (SPEC §1). The sandbox base is the
 * production one with `sandbox` inserted after `/api`; on the crypto host that makes the sandbox
 * base an extension of the production one, so sandbox is matched first.
 */
export const BASE_PATHS = {
    fiat: { production: '/api/b2b', sandbox: '/api/sandbox/b2b' },
    crypto: { production: '/api', sandbox: '/api/sandbox' },
};
/** Relative to the fiat base of the environment. */
export const TOKEN_PATH = '/auth/generate-bearer-token';
const MATCH_ORDER = ['sandbox', 'production'];
export function resolveTarget(server, rawTarget) {
    const queryStart = rawTarget.indexOf('?');
    const pathname = queryStart < 0 ? rawTarget : rawTarget.slice(0, queryStart);
    const query = queryStart < 0 ? '' : rawTarget.slice(queryStart + 1);
    for (const environment of MATCH_ORDER) {
        const base = BASE_PATHS[server][environment];
        if (pathname === base || pathname.startsWith(`${base}/`)) {
            return { environment, path: pathname.slice(base.length), query };
        }
    }
    return { environment: null, path: pathname, query };
}
//# sourceMappingURL=paths.js.map