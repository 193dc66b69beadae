/**
 * Minimal HS256 JWT for the fake provider. The real provider hands out HS256 JWTs, so the fake signs
 * genuine ones: the proxy's "looks like a JWT" check and the tests' decoding then see the real shape,
 * without a JWT library in the dependency tree.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
const HEADER = encodeSegment({ alg: 'HS256', typ: 'JWT' });
const SEGMENT = /^[A-Za-z0-9_-]+$/;
export function signJwt(payload, secret) {
    const signingInput = `${HEADER}.${encodeSegment(payload)}`;
    return `${signingInput}.${hmac(signingInput, secret)}`;
}
/**
 * Checks shape and signature only: whether `exp` has passed depends on whose clock is asked, so that
 * is the caller's decision. Returns null for anything that is not a well-formed, correctly signed token.
 */
export function verifyJwt(token, secret) {
    const parts = token.split('.');
    if (parts.length !== 3 || !parts.every((part) => SEGMENT.test(part)))
        return null;
    const [header, payload, signature] = parts;
    // Comparing canonical encodings rather than decoded bytes also rejects signatures whose unused
    // trailing bits were altered, which base64url decoding would silently ignore.
    const expected = Buffer.from(hmac(`${header}.${payload}`, secret));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
        return null;
    if (decodeSegment(header)?.alg !== 'HS256')
        return null;
    return decodeSegment(payload);
}
function encodeSegment(value) {
    return Buffer.from(JSON.stringify(value)).toString('base64url');
}
function decodeSegment(segment) {
    try {
        const value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
        return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : null;
    }
    catch {
        return null;
    }
}
function hmac(input, secret) {
    return createHmac('sha256', secret).update(input).digest('base64url');
}
//# sourceMappingURL=jwt.js.map