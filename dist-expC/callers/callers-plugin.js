/**
 * Carries out SPEC §7's checks before the amount step, in the SPEC's order: identity 401 -> allow
 * 403 -> rate 429 (onRequest, before any body is read) -> requireExternalReference 400
 * (preHandler, on the held body). Every refusal is logged at warn with the caller id and code,
 * counted, and reaches no upstream.
 *
 * Rate limits go through the state store's `hit` rather than @fastify/rate-limit: one store
 * contract holds idempotency records, rate windows and day totals (memory or Redis alike), a store
 * failure fails closed with 503 STATE_UNAVAILABLE, and the check must run after identity and allow
 * and before the body, which a separate plugin's own hook order would not guarantee.
 */
import fp from 'fastify-plugin';
import { Counter } from 'prom-client';
import { CallerNotPermittedError, CallerRateLimitedError, CallerUnauthenticatedError, ExternalReferenceRequiredError, } from '../errors.js';
import { parseStrictJsonBytes, readPointer } from '../json/strict-json.js';
import { BODY_METHODS } from './amount-limits.js';
import { judgeCaller } from './judge-caller.js';
function authorizationsOf(request) {
    const raw = request.raw.rawHeaders;
    const values = [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
        if (raw[i]?.toLowerCase() === 'authorization')
            values.push(raw[i + 1] ?? '');
    }
    return values;
}
export function createRefusalCounter(registry, metricPrefix) {
    return new Counter({
        name: `${metricPrefix}caller_refusals_total`,
        help: 'Requests refused by a caller rule (SPEC §7), by caller and code',
        labelNames: ['caller', 'code'],
        registers: [registry],
    });
}
export const callersPlugin = fp(async function callersPlugin(app, options) {
    const { refusals } = options;
    app.decorateRequest('callerSpec', null);
    function refuse(request, callerId, error) {
        refusals.inc({ caller: callerId, code: error.code });
        request.log.warn({ callerId, code: error.code }, 'caller refused');
        return error;
    }
    app.addHook('onRequest', async (request) => {
        const target = request.target;
        if (target === null)
            return;
        const authorizations = authorizationsOf(request);
        // The caller key is consumed here: it is never forwarded (header-policy drops it too) nor logged.
        // Assigned rather than deleted: `delete` would turn the headers object into a dictionary,
        // slowing every later read of it on this request.
        request.headers.authorization = undefined;
        const verdict = judgeCaller(options.callers(), {
            authorizations,
            peer: request.raw.socket.remoteAddress ?? '',
            environment: target.route.environment,
            interface: target.route.interface,
            method: request.method,
            path: target.path,
        });
        if (verdict.kind === 'unauthenticated')
            throw refuse(request, 'anonymous', new CallerUnauthenticatedError(verdict.reason));
        const caller = verdict.caller;
        if (verdict.kind === 'not-permitted') {
            throw refuse(request, caller.id, new CallerNotPermittedError(`Caller ${caller.id} is not permitted ${request.method} on this path`));
        }
        request.caller = { id: caller.id };
        request.callerSpec = caller;
        if (caller.rateLimit !== null) {
            const { requests, perSeconds } = caller.rateLimit;
            const rate = await options.store.hit(`rate:${caller.id}`, requests, perSeconds * 1000);
            if (!rate.admitted)
                throw refuse(request, caller.id, new CallerRateLimitedError(Math.max(1, Math.ceil(rate.retryAfterMs / 1000))));
        }
        if (BODY_METHODS.has(request.method) && (caller.requireExternalReference || caller.amountLimits.length > 0))
            request.holdBody = true;
    });
    app.addHook('preHandler', async (request) => {
        const caller = request.callerSpec;
        if (caller === null || !caller.requireExternalReference || !BODY_METHODS.has(request.method))
            return;
        const body = request.body;
        const parsed = Buffer.isBuffer(body) ? parseStrictJsonBytes(body) : null;
        const read = parsed?.ok === true ? readPointer(parsed.value, options.keyPointer) : null;
        if (read?.kind === 'found' && typeof read.value === 'string' && read.value !== '')
            return;
        throw refuse(request, caller.id, new ExternalReferenceRequiredError(`Caller ${caller.id} must send a non-empty string reference at ${options.keyPointer}`));
    });
}, { name: 'callers' });
//# sourceMappingURL=callers-plugin.js.map