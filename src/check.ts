/**
 * `payments-auth-proxy check`: what an operator runs before going live. Validates the
 * configuration and the listen address, fetches one token per enabled environment (prints
 * `expiresAt` and the lifetime, never the token) and the egress IP, reaches the shared store and,
 * when a caller uses approveAbove, the approvals' store, with the webhook inbox on everything its
 * start needs, with payments on their look-up paths and store, and the MCP tools file when MCP is
 * on; exits non-zero with a reason when anything
 * would stop `serve` or is wrong.
 */
import { readCallersFile } from './callers/callers-file.js'
import type { Logger } from 'pino'
import { systemClock } from './clock.js'
import type { Config, EnvironmentConfig } from './config/config.js'
import { createEgressReporter } from './egress/egress-reporter.js'
import { listenReport } from './http/listen-check.js'
import { createOutbound } from './outbound/outbound-agents.js'
import { askRedis, checkStore, redisFinding, type RedisFinding } from './state/check-store.js'
import { createTokenClient } from './tokens/token-client.js'
import { TokenRequestError } from './tokens/token-grant.js'

/** The inbox's own check (webhooks/check-inbox.ts), which cli.ts hands in: the proxy's modules never import the inbox. */
export type InboxCheck = (redis: Promise<RedisFinding> | null) => Promise<{ ok: boolean, lines: string[] }>

export async function runCheck (config: Config, out: (line: string) => void, log: Logger, checkInbox?: InboxCheck): Promise<boolean> {
  const outbound = createOutbound(config)
  // Asked once, now, for every store kept in Redis: its wait runs beside the token fetches.
  const redis = config.state.redisUrl === null ? undefined : askRedis(config.state.redisUrl, log)
  let ok = true
  try {
    const listen = await listenReport('listen', config.listen)
    if (!listen.ok) ok = false
    out(listen.line)
    const fetchToken = createTokenClient({ dispatcher: outbound.tokens, clock: systemClock, timeoutMs: config.token.timeoutS * 1000, maxLifetimeS: config.token.maxLifetimeS })
    for (const env of Object.values(config.environments)) {
      try {
        const grant = await fetchToken(env)
        out(`ok    ${env.name}: token obtained, expiresAt ${grant.expiresAt} (${new Date(grant.expiresAt * 1000).toISOString()}), lifetime ${grant.lifetimeS} s`)
      } catch (err) {
        ok = false
        out(`FAIL  ${env.name}: ${explain(err, env)}`)
      }
    }
    if (config.egress.url === null) {
      out('skip  egress IP: PROXY_EGRESS_IP_URL=off')
    } else {
      const reporter = createEgressReporter({ url: config.egress.url, intervalMs: 0, expectedIps: config.egress.expectedIps, dispatcher: outbound.upstream, clock: systemClock, log })
      const ip = await reporter.check()
      if (ip === null) {
        const required = config.egress.expectedIps.length > 0
        if (required) ok = false
        out(`${required ? 'FAIL' : 'warn'}  egress IP: ${config.egress.url} could not be reached`)
      } else if (reporter.isExpected() === false) {
        ok = false
        out(`FAIL  egress IP: ${ip} is not in PROXY_EXPECTED_EGRESS_IPS (${config.egress.expectedIps.join(', ')}); allowlist it under Developers -> IP Addresses`)
      } else {
        out(`ok    egress IP: ${ip}${reporter.isExpected() === true ? ' (in PROXY_EXPECTED_EGRESS_IPS)' : ' (allowlist it under Developers -> IP Addresses for production fiat payouts)'}`)
      }
    }
    if (config.callers.file !== null) {
      const callers = readCallersFile(config.callers.file)
      if (callers.ok) {
        out(`ok    callers file: ${callers.callers.length} callers`)
        // Loaded only with a callers file: approvals exist only there (approveAbove).
        const approvals = await (await import('./approvals/check-approvals.js')).checkApprovals(config, callers.callers, log, redis)
        if (!approvals.ok) ok = false
        for (const line of approvals.lines) out(line)
      } else { ok = false; for (const problem of callers.problems) out(`FAIL  callers file: ${problem}`) }
    }
    if (checkInbox !== undefined) {
      const inbox = await checkInbox(redis === undefined ? null : redis.then(redisFinding))
      if (!inbox.ok) ok = false
      for (const line of inbox.lines) out(line)
    }
    if (config.mcp.enabled && config.mcp.toolsFile !== null) {
      const tools = (await import('./mcp/tools-file.js')).readToolsFile(config.mcp.toolsFile, config.paths)
      if (tools.ok) out(`ok    MCP tools file: ${tools.tools.length} tools`)
      else { ok = false; for (const problem of tools.problems) out(`FAIL  MCP tools file: ${problem}`) }
    }
    const store = await checkStore(config, log, redis)
    if (!store.ok) ok = false
    out(store.line)
    // The console (SPEC §14), loaded only when PROXY_CONSOLE_LISTEN is set.
    if (config.console !== null) for (const line of await (await import('./console/check-console.js')).checkConsole(config.console)) out(line)
    if (config.payments !== null) {
      // Loaded only when payments are on.
      const payments = await (await import('./payments/check-payments.js')).checkPayments({ ...config, payments: config.payments }, log)
      if (!payments.ok) ok = false
      for (const line of payments.lines) out(line)
    }
  } finally {
    await outbound.close()
  }
  return ok
}

function explain (err: unknown, env: EnvironmentConfig): string {
  const upper = env.name.toUpperCase()
  if (err instanceof TokenRequestError) {
    if (err.reason === 'rejected') return `the token endpoint refused the credentials (HTTP ${String(err.details['status'])}): check PAYMENTS_${upper}_API_KEY and PAYMENTS_${upper}_PUBLIC_KEY`
    if (err.reason === 'network' || err.reason === 'timeout') return `${err.message}: check PAYMENTS_FIAT_BASE_URL and the network (${new URL(env.tokenUrl).host})`
    return `${err.message} (${err.reason})`
  }
  return 'unexpected error while fetching a token'
}
