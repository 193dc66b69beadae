import { TokenRequestError } from './token-grant.js';
// Three base64url parts; the signature may not be empty for HS256.
const JWT_SHAPE = /^[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{16,}$/;
const MAX_TOKEN_LENGTH = 8192;
/** Unix seconds this large are milliseconds (it is the year 33658 in seconds). */
const MILLISECONDS_THRESHOLD = 1e12;
/**
 * The Date header has one-second resolution and our receipt lags the provider's stamp, so one
 * second is taken off every lifetime: refreshing early is always safe, late never is.
 */
const CLOCK_RESOLUTION_S = 1;
export function parseTokenResponse(raw, clock) {
    const facts = { status: raw.statusCode, contentType: raw.contentType, length: Buffer.byteLength(raw.body) };
    if (raw.statusCode === 401 || raw.statusCode === 403) {
        throw new TokenRequestError('rejected', 'token endpoint refused the credentials: check the API key and public key', facts);
    }
    if (raw.statusCode < 200 || raw.statusCode > 299) {
        throw new TokenRequestError('http_status', `token endpoint answered HTTP ${raw.statusCode}`, facts);
    }
    let body;
    try {
        body = JSON.parse(raw.body);
    }
    catch {
        throw new TokenRequestError('not_json', 'token endpoint answered something that is not JSON', facts);
    }
    if (body === null || typeof body !== 'object')
        throw new TokenRequestError('not_json', 'token endpoint answered JSON that is not an object', facts);
    const { success, token, expiresAt } = body;
    if (success !== true)
        throw new TokenRequestError('success_false', 'token endpoint answered without success: true', facts);
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !JWT_SHAPE.test(token) || !hasJwtHeader(token)) {
        throw new TokenRequestError('bad_token', 'token endpoint answered a token that is not a JWT', facts);
    }
    if (typeof expiresAt !== 'number' || !Number.isSafeInteger(expiresAt) || expiresAt <= 0) {
        throw new TokenRequestError('bad_expires_at', 'token endpoint answered an expiresAt that is not integer Unix seconds', facts);
    }
    if (expiresAt >= MILLISECONDS_THRESHOLD) {
        throw new TokenRequestError('expires_at_in_milliseconds', 'token endpoint answered expiresAt in milliseconds, expected seconds', facts);
    }
    const providerNowMs = parseHttpDate(raw.date) ?? clock.receivedWallMs;
    const lifetimeS = Math.min(expiresAt - Math.floor(providerNowMs / 1000) - CLOCK_RESOLUTION_S, clock.maxLifetimeS);
    if (lifetimeS <= 0) {
        throw new TokenRequestError('expired', 'token endpoint answered a token that is already expired by its own clock', { ...facts, expiresAt });
    }
    return {
        token,
        expiresAt,
        lifetimeS,
        obtainedAtMs: clock.sentMonoMs,
        expiresAtMs: clock.sentMonoMs + lifetimeS * 1000,
    };
}
function hasJwtHeader(token) {
    try {
        const header = JSON.parse(Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString('utf8'));
        return header !== null && typeof header === 'object' && typeof header.alg === 'string';
    }
    catch {
        return false;
    }
}
function parseHttpDate(value) {
    if (value === undefined)
        return null;
    const ms = Date.parse(value);
    return Number.isFinite(ms) ? ms : null;
}
//# sourceMappingURL=token-response.js.map