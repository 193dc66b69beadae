/**
 * Issues and checks the fake provider's bearer tokens, one signing secret per environment (random at
 * start, so a token from another environment or another run never verifies).
 *
 * Mirrors the provider's "generates or retrieves" semantics: while the environment's current token
 * has more than half of its lifetime left, asking again hands back that same token with the same
 * expiresAt (the case a proxy refresh must survive without looping); past half-life a new token is
 * issued, and the old one stays valid until its own exp.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { signJwt, verifyJwt } from './jwt.js';
export class TokenIssuer {
    /** Never cleared: a token stays a secret worth scanning for as long as it may be valid. */
    issuedTokens = [];
    now;
    secrets = {
        production: randomBytes(32).toString('base64url'),
        sandbox: randomBytes(32).toString('base64url'),
    };
    current = new Map();
    revoked = new Set();
    lifetimeSeconds;
    constructor(now, lifetimeSeconds) {
        this.now = now;
        this.lifetimeSeconds = checkLifetime(lifetimeSeconds);
    }
    issueOrRetrieve(environment) {
        const nowMs = this.now();
        const held = this.current.get(environment);
        if (held !== undefined && held.expiresAt * 1000 - nowMs > (held.lifetimeSeconds * 1000) / 2) {
            return { token: held.token, expiresAt: held.expiresAt };
        }
        const iat = Math.floor(nowMs / 1000);
        const expiresAt = iat + this.lifetimeSeconds;
        const token = signJwt({ env: environment, iat, exp: expiresAt, jti: randomUUID() }, this.secrets[environment]);
        this.current.set(environment, { token, expiresAt, lifetimeSeconds: this.lifetimeSeconds });
        this.issuedTokens.push(token);
        return { token, expiresAt };
    }
    isValid(environment, token) {
        const payload = verifyJwt(token, this.secrets[environment]);
        if (payload === null || typeof payload.exp !== 'number')
            return false;
        return this.now() < payload.exp * 1000 && !this.revoked.has(token);
    }
    revokeAll() {
        for (const token of this.issuedTokens)
            this.revoked.add(token);
        this.current.clear();
    }
    setLifetime(seconds) {
        this.lifetimeSeconds = checkLifetime(seconds);
        // Otherwise "retrieves" would keep handing out a token with the old lifetime for a while.
        this.current.clear();
    }
}
function checkLifetime(seconds) {
    if (!Number.isInteger(seconds) || seconds <= 0)
        throw new RangeError(`token lifetime must be a positive integer of seconds, got ${seconds}`);
    return seconds;
}
//# sourceMappingURL=token-issuer.js.map