/**
 * Finds the address the provider sees our requests come from, through the same dispatcher as
 * upstream calls (same pools, same IPv4 pinning), so operators know what to allowlist for
 * production fiat payouts (provider dashboard: Developers -> IP Addresses). Never fatal: an
 * unreachable echo service is a warning and the next check is on schedule.
 */
import { isIP } from 'node:net';
import { request } from 'undici';
const CHECK_TIMEOUT_MS = 5_000;
const MAX_BODY_BYTES = 256;
export const ALLOWLIST_HINT = 'add this address in the provider dashboard under Developers -> IP Addresses (IPv4 only)';
export function createEgressReporter(options) {
    const { url, intervalMs, expectedIps, dispatcher, clock, onUpdate } = options;
    const log = options.log.child({ component: 'egress' });
    let current = null;
    let timer = null;
    let closed = false;
    const isExpected = () => expectedIps.length === 0 || current === null ? null : expectedIps.includes(current);
    async function check() {
        if (url === null)
            return null;
        let ip;
        try {
            ip = await fetchIp(url, dispatcher);
        }
        catch (err) {
            log.warn({ err, url }, 'egress IP check failed; will retry');
            return null;
        }
        const previous = current;
        current = ip;
        // One message for first sight and change (SPEC §5), so a search for it finds every address to allowlist.
        if (previous === null)
            log.info({ egressIp: ip, hint: ALLOWLIST_HINT }, 'egress IP for allowlisting');
        else if (previous !== ip)
            log.warn({ previousEgressIp: previous, egressIp: ip, hint: ALLOWLIST_HINT }, 'egress IP for allowlisting');
        const expected = isExpected();
        if (expected === false)
            log.error({ egressIp: ip, expectedEgressIps: expectedIps }, 'egress IP is not in PROXY_EXPECTED_EGRESS_IPS: production fiat payouts will fail with IP_NOT_ALLOWED');
        onUpdate?.(ip, expected);
        return ip;
    }
    function schedule() {
        if (closed || url === null)
            return;
        timer = clock.setTimeout(() => { void check().finally(schedule); }, intervalMs);
    }
    return {
        start() {
            if (url === null) {
                log.info('egress IP check disabled (PROXY_EGRESS_IP_URL=off)');
                return;
            }
            void check().finally(schedule);
        },
        check,
        current: () => current,
        isExpected,
        close() {
            closed = true;
            if (timer !== null)
                clock.clearTimeout(timer);
        },
    };
}
async function fetchIp(url, dispatcher) {
    const { statusCode, body } = await request(url, {
        dispatcher, method: 'GET', headers: { accept: 'text/plain' }, signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
    });
    let text = '';
    for await (const chunk of body) {
        text += chunk.toString('latin1');
        if (text.length > MAX_BODY_BYTES) {
            body.destroy();
            throw new Error('IP echo answer too long');
        }
    }
    if (statusCode !== 200)
        throw new Error(`IP echo answered HTTP ${statusCode}`);
    const ip = text.trim();
    if (isIP(ip) === 0)
        throw new Error('IP echo answer is not an IP address');
    return ip;
}
//# sourceMappingURL=egress-reporter.js.map