/**
 * Stand-in for a plain-text "what is my IP" service, so the proxy's egress-IP discovery and its
 * change warning can be exercised without the internet.
 */
import { sendJson } from './http-io.js';
export function createIpEchoHandler(state) {
    return async (req, res) => {
        state.requests += 1;
        if ((req.method !== 'GET' && req.method !== 'HEAD') || req.url !== '/ip') {
            sendJson(res, 404, { success: false, message: 'Not found' });
            return;
        }
        const body = `${state.egressIp}\n`;
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
        res.end(body);
    };
}
//# sourceMappingURL=ip-echo.js.map