/**
 * `payments-auth-proxy check`: what an operator runs before going live. Validates the
 * configuration, fetches one token per enabled environment (prints `expiresAt` and the lifetime,
 * never the token) and the egress IP, and exits non-zero with a reason when anything is wrong.
 */
import { readCallersFile } from './callers/callers-file.js';
import { systemClock } from './clock.js';
import { createEgressReporter } from './egress/egress-reporter.js';
import { createOutbound } from './outbound/outbound-agents.js';
import { checkStore } from './state/check-store.js';
import { createTokenClient } from './tokens/token-client.js';
import { TokenRequestError } from './tokens/token-grant.js';
export async function runCheck(config, out, log) {
    const outbound = createOutbound(config);
    let ok = true;
    try {
        const fetchToken = createTokenClient({ dispatcher: outbound.tokens, clock: systemClock, timeoutMs: config.token.timeoutS * 1000, maxLifetimeS: config.token.maxLifetimeS });
        for (const env of Object.values(config.environments)) {
            try {
                const grant = await fetchToken(env);
                out(`ok    ${env.name}: token obtained, expiresAt ${grant.expiresAt} (${new Date(grant.expiresAt * 1000).toISOString()}), lifetime ${grant.lifetimeS} s`);
            }
            catch (err) {
                ok = false;
                out(`FAIL  ${env.name}: ${explain(err, env)}`);
            }
        }
        if (config.egress.url === null) {
            out('skip  egress IP: PROXY_EGRESS_IP_URL=off');
        }
        else {
            const reporter = createEgressReporter({ url: config.egress.url, intervalMs: 0, expectedIps: config.egress.expectedIps, dispatcher: outbound.upstream, clock: systemClock, log });
            const ip = await reporter.check();
            if (ip === null) {
                const required = config.egress.expectedIps.length > 0;
                if (required)
                    ok = false;
                out(`${required ? 'FAIL' : 'warn'}  egress IP: ${config.egress.url} could not be reached`);
            }
            else if (reporter.isExpected() === false) {
                ok = false;
                out(`FAIL  egress IP: ${ip} is not in PROXY_EXPECTED_EGRESS_IPS (${config.egress.expectedIps.join(', ')}); allowlist it under Developers -> IP Addresses`);
            }
            else {
                out(`ok    egress IP: ${ip}${reporter.isExpected() === true ? ' (in PROXY_EXPECTED_EGRESS_IPS)' : ' (allowlist it under Developers -> IP Addresses for production fiat payouts)'}`);
            }
        }
        if (config.callers.file !== null) {
            const callers = readCallersFile(config.callers.file);
            if (callers.ok)
                out(`ok    callers file: ${callers.callers.length} callers`);
            else {
                ok = false;
                for (const problem of callers.problems)
                    out(`FAIL  callers file: ${problem}`);
            }
        }
        const store = await checkStore(config, log);
        if (!store.ok)
            ok = false;
        out(store.line);
    }
    finally {
        await outbound.close();
    }
    return ok;
}
function explain(err, env) {
    const upper = env.name.toUpperCase();
    if (err instanceof TokenRequestError) {
        if (err.reason === 'rejected')
            return `the token endpoint refused the credentials (HTTP ${String(err.details['status'])}): check PAYMENTS_${upper}_API_KEY and PAYMENTS_${upper}_PUBLIC_KEY`;
        if (err.reason === 'network' || err.reason === 'timeout')
            return `${err.message}: check PAYMENTS_FIAT_BASE_URL and the network (${new URL(env.tokenUrl).host})`;
        return `${err.message} (${err.reason})`;
    }
    return 'unexpected error while fetching a token';
}
//# sourceMappingURL=check.js.map