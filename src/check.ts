/**
 * `payments-auth-proxy check`: what an operator runs before going live. Validates the
 * configuration and the listen address, fetches one token per enabled environment (prints
 * `expiresAt` and the lifetime, never the token) and the egress IP, reaches the shared store,
 * reads the callers file, then prints each feature's section (features/index.ts) in the list's
 * order; exits non-zero with a reason when anything would stop `serve` or is wrong.
 */
import type { Logger } from 'pino'
import { readCallersFile, type CallerSpec } from './callers/callers-file.js'
import { systemClock } from './clock.js'
import type { Config, EnvironmentConfig } from './config/config.js'
import { createEgressReporter } from './egress/egress-reporter.js'
import { FEATURES } from './features/index.js'
import { listenReport } from './http/listen-check.js'
import { createOutbound } from './outbound/outbound-agents.js'
import { askRedis, checkStore, redisFinding } from './state/check-store.js'
import { createStorage } from './storage/storage.js'
import { createTokenClient } from './tokens/token-client.js'
import { TokenRequestError } from './tokens/token-grant.js'

export async function runCheck (config: Config, out: (line: string) => void, log: Logger): Promise<boolean> {
  const outbound = createOutbound(config)
  // Asked once, now, for every store kept in Redis: its wait runs beside the token fetches.
  const redis = config.state.redisUrl === null ? undefined : askRedis(config.state.redisUrl, log)
  // What the features' stores are opened with once Redis answered: one connection for them all.
  const storage = createStorage(config.state, 'check')
  let ok = true
  try {
    const listen = await listenReport('listen', config.listen)
    if (!listen.ok) ok = false
    out(listen.line)
    const fetchToken = createTokenClient({
      dispatcher: outbound.tokens,
      clock: systemClock,
      timeoutMs: config.token.timeoutS * 1000,
      maxLifetimeS: config.token.maxLifetimeS,
    })
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
      const reporter = createEgressReporter({
        url: config.egress.url,
        intervalMs: 0,
        expectedIps: config.egress.expectedIps,
        dispatcher: outbound.upstream,
        clock: systemClock,
        log,
      })
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
    const store = await checkStore(config, log, redis)
    if (!store.ok) ok = false
    out(store.line)
    let callers: readonly CallerSpec[] | null = null
    if (config.callers.file !== null) {
      const read = readCallersFile(config.callers.file)
      if (read.ok) {
        callers = read.callers
        out(`ok    callers file: ${read.callers.length} callers`)
      } else { ok = false; for (const problem of read.problems) out(`FAIL  callers file: ${problem}`) }
    }
    const finding = redis === undefined ? null : redis.then(redisFinding)
    for (const feature of FEATURES) {
      const section = await feature.check?.({ config, log, redis, redisFinding: finding, storage, callers })
      if (section === undefined || section === null) continue
      if (!section.ok) ok = false
      for (const line of section.lines) out(line)
    }
  } finally {
    await outbound.close()
    await storage.close()
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
