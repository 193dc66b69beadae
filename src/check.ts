/**
 * `payments-auth-proxy check`: what an operator runs before going live. Validates the
 * configuration and the listen address, fetches one token per enabled environment (prints
 * `expiresAt` and the lifetime, never the token) and the egress IP, reaches the shared store and,
 * when a caller uses approveAbove, the approvals' store, and with payments on their look-up paths
 * and store, and exits non-zero with a reason when anything is wrong.
 */
import { readCallersFile } from './callers/callers-file.js'
import type { Logger } from 'pino'
import { systemClock } from './clock.js'
import type { Config, EnvironmentConfig } from './config/config.js'
import { get } from 'node:http'
import { createEgressReporter } from './egress/egress-reporter.js'
import { listenProblem } from './http/listen-check.js'
import { createOutbound } from './outbound/outbound-agents.js'
import { checkStore } from './state/check-store.js'
import { createTokenClient } from './tokens/token-client.js'
import { TokenRequestError } from './tokens/token-grant.js'

export async function runCheck (config: Config, out: (line: string) => void, log: Logger): Promise<boolean> {
  const outbound = createOutbound(config)
  let ok = true
  try {
    const listen = await checkListen(config)
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
        const approvals = await (await import('./approvals/check-approvals.js')).checkApprovals(config, callers.callers, log)
        if (!approvals.ok) ok = false
        for (const line of approvals.lines) out(line)
      } else { ok = false; for (const problem of callers.problems) out(`FAIL  callers file: ${problem}`) }
    }
    const store = await checkStore(config, log)
    if (!store.ok) ok = false
    out(store.line)
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

/**
 * A taken port fails, unless what holds it answers /healthz: then this is most likely `check` run
 * beside the proxy it checks (kubectl exec, docker-compose exec), which must not fail for that.
 */
async function checkListen (config: Config): Promise<{ ok: boolean, line: string }> {
  const { host, port } = config.listen
  const problem = await listenProblem(host, port)
  if (problem === null) return { ok: true, line: `ok    listen: ${host}:${port} can be opened` }
  if (await answersHealthz(host, port)) return { ok: true, line: `warn  listen: ${problem}, by a server that answers /healthz (the proxy already running, when check runs beside it)` }
  return { ok: false, line: `FAIL  listen: ${problem}` }
}

function answersHealthz (host: string, port: number): Promise<boolean> {
  const target = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  return new Promise((resolve) => {
    const req = get({ host: target, port, path: '/healthz', timeout: 1000 }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { body += chunk })
      res.on('end', () => { resolve(res.statusCode === 200 && body.includes('"status":"ok"')) })
      res.on('error', () => { resolve(false) })
    })
    req.on('timeout', () => { req.destroy() })
    req.on('error', () => { resolve(false) })
  })
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
