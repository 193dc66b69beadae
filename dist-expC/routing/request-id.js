/**
 * Request ids: a caller's `x-request-id` is kept when it is a sane token (so a trace spans app,
 * proxy and provider), otherwise one is generated. Header values are attacker-controlled, so the
 * accepted shape is narrow and short.
 */
import { randomUUID } from 'node:crypto';
const REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;
export function requestIdFor(req) {
    const incoming = req.headers['x-request-id'];
    return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
//# sourceMappingURL=request-id.js.map