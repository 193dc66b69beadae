/**
 * One access log line and one metrics observation per proxied request, after the answer is out
 * (SPEC §7 audit: every line names the caller). The proxy's own endpoints are not counted. The path
 * is the upstream path without its query string, which may carry references or personal data.
 */
import fp from 'fastify-plugin';
import { callerIdOf } from '../callers/caller.js';
export const requestAudit = fp(async function requestAudit(app, options) {
    const { metrics } = options;
    // One child for every access line, without redaction: the line's fields are ours and hold no
    // secret (the path has no query string), and pino's redaction costs a few percent per request.
    const accessLog = app.log.child({}, { redact: [] });
    app.addHook('onResponse', (request, reply, done) => {
        done();
        const ctx = request.proxy;
        if (ctx === null)
            return;
        metrics.requestCompleted(ctx.route.environment ?? '', ctx.route.interface, reply.statusCode, (performance.now() - ctx.startedMs) / 1000, callerIdOf(request));
        accessLog.info({
            reqId: request.id,
            environment: ctx.route.environment,
            interface: ctx.route.interface,
            method: request.method,
            path: ctx.upstreamPath,
            status: reply.statusCode,
            retried: ctx.attempt > 0,
            durationMs: Math.round(reply.elapsedTime * 100) / 100,
            caller: callerIdOf(request),
        }, 'proxied request');
    });
}, { name: 'request-audit' });
//# sourceMappingURL=request-audit.js.map