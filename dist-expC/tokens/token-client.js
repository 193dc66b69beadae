/**
 * Exchanges one environment's API Key + Public Key for a Bearer token (SPEC §1). The API key goes
 * to this URL only; undici's request() follows no redirect, so a 3xx is a failure and the key
 * never travels to the `Location` host (Node's fetch would resend it).
 */
import { request } from 'undici';
import { parseTokenResponse } from './token-response.js';
import { TokenRequestError } from './token-grant.js';
/** A token answer is about 300 bytes; anything far larger is not one, and is not read. */
const MAX_RESPONSE_BYTES = 64 * 1024;
export function createTokenClient(options) {
    const { dispatcher, clock, timeoutMs, maxLifetimeS } = options;
    return async function fetchToken(environment, signal) {
        const sentMonoMs = clock.monotonicMs();
        const timeout = AbortSignal.timeout(timeoutMs);
        const abort = signal === undefined ? timeout : AbortSignal.any([timeout, signal]);
        let response;
        try {
            response = await request(environment.tokenUrl, {
                dispatcher,
                method: 'POST',
                headers: {
                    'api-key': environment.credentials.apiKey,
                    'content-type': 'application/json',
                    accept: 'application/json',
                },
                body: JSON.stringify({ publicKey: environment.credentials.publicKey }),
                headersTimeout: timeoutMs,
                bodyTimeout: timeoutMs,
                signal: abort,
            });
        }
        catch (err) {
            throw failure(err, timeout);
        }
        const { statusCode, headers } = response;
        const contentType = headerValue(headers['content-type']);
        // What a failure may log about the answer: never its body, which could hold a token.
        const facts = { status: statusCode, contentType, length: headerValue(headers['content-length']) };
        if (statusCode >= 300 && statusCode < 400) {
            // destroy() emits an abort error on the body; unheard, it would crash the process.
            response.body.on('error', () => { });
            response.body.destroy();
            throw new TokenRequestError('redirect', `token endpoint answered a redirect (HTTP ${statusCode}); redirects are never followed`, facts);
        }
        let body;
        try {
            body = await readLimited(response.body, MAX_RESPONSE_BYTES);
        }
        catch (err) {
            throw failure(err, timeout);
        }
        if (body === null)
            throw new TokenRequestError('too_large', `token endpoint answered more than ${MAX_RESPONSE_BYTES} bytes`, facts);
        return parseTokenResponse({ statusCode, contentType, date: headerValue(headers.date), body }, { receivedWallMs: clock.wallMs(), sentMonoMs, maxLifetimeS });
    };
}
function failure(err, timeout) {
    const code = err.code;
    if (timeout.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
        return new TokenRequestError('timeout', 'token endpoint did not answer in time (PROXY_TOKEN_TIMEOUT_SECONDS)', {}, err);
    }
    return new TokenRequestError('network', 'token endpoint could not be reached', { code: typeof code === 'string' ? code : undefined }, err);
}
/** The body as text, or null (and the rest left unread) once it passes `limit` bytes. */
async function readLimited(body, limit) {
    const chunks = [];
    let size = 0;
    for await (const chunk of body) {
        size += chunk.length;
        if (size > limit) {
            body.destroy();
            return null;
        }
        chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
}
function headerValue(value) {
    return Array.isArray(value) ? value[0] : value;
}
//# sourceMappingURL=token-client.js.map