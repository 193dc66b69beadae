/**
 * Requests refused before routing matters: while draining (SPEC §5 shutdown), a target that does
 * not canonicalise (canonical-path.ts, run as Fastify's rewriteUrl so the router only ever sees
 * canonical paths), and headers the header policy refuses. Also tags every answer with its id.
 */
import fp from 'fastify-plugin';
import { BadRequestError, HeadersTooLargeError, InvalidHeadersError, InvalidPathError, ShuttingDownError } from '../errors.js';
import { requestHeaderProblem } from '../headers/header-policy.js';
import { canonicalizeTarget } from '../routing/canonical-path.js';
import { splitTarget } from '../routing/canonical-path.js';
const kPathProblem = Symbol('pathProblem');
/** Answered even while draining; /readyz is not, so orchestrators stop routing to us. */
const ALWAYS_ANSWERED = new Set(['/healthz', '/metrics']);
/** Fastify's `rewriteUrl`: the canonical target, or '/' with the reason kept for the refusal hook. */
export function rewriteToCanonical(req) {
    const target = canonicalizeTarget(req.url ?? '');
    if (!target.ok) {
        req[kPathProblem] = target.reason;
        return '/';
    }
    return target.query === '' ? target.path : `${target.path}?${target.query}`;
}
export const requestRefusal = fp(async function requestRefusal(app, options) {
    function refusal(request) {
        if (options.isClosing() && !ALWAYS_ANSWERED.has(splitTarget(request.url)[0]))
            return new ShuttingDownError();
        if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
            request.log.warn({ remoteAddress: request.raw.socket.remoteAddress }, 'request without Host refused');
            return new BadRequestError('an HTTP/1.1 request needs a Host header');
        }
        const problem = request.raw[kPathProblem];
        if (problem !== undefined) {
            request.log.warn({ reason: problem }, 'request path refused');
            return new InvalidPathError(problem);
        }
        const headerProblem = requestHeaderProblem(request.raw.rawHeaders);
        if (headerProblem !== null) {
            request.log.warn({ reason: headerProblem.reason }, 'request headers refused');
            return headerProblem.status === 431 ? new HeadersTooLargeError(headerProblem.reason) : new InvalidHeadersError(headerProblem.reason);
        }
        return undefined;
    }
    app.addHook('onRequest', (request, reply, done) => {
        reply.header('x-request-id', request.id);
        done(refusal(request));
    });
}, { name: 'request-refusal' });
//# sourceMappingURL=request-refusal.js.map