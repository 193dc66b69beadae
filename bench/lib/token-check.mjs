/**
 * "Token requests per environment per refresh window: exactly 1, whatever the request rate."
 * The bench upstream issues short tokens (BENCH_TOKEN_LIFETIME_S) so that several refresh windows
 * pass during a run; it records when each environment asked for one. The run passes when, for each
 * environment: the first request came right after start, every later one came one refresh
 * interval after the previous (never two in a window, none missed), the last one is not overdue at
 * the end, and the upstream never saw an unknown or expired token.
 *
 * The interval is recomputed here from the proxy's documented policy (src/tokens/refresh-policy.ts
 * and token-response.ts: lifetime = expiresAt - provider Date - 1 s; refresh `margin` before expiry,
 * margin capped at half the lifetime, up to a quarter of it (max 60 s) of jitter earlier; a 2 s or 5 %
 * safety window), with a tolerance for request latency and the 1 s resolution of `expiresAt`.
 */

const TOLERANCE_EARLY_MS = 1_500
const TOLERANCE_LATE_MS = 1_500

export function refreshIntervalMs (tokenLifetimeS, refreshMarginS) {
  const lifetimeMs = (tokenLifetimeS - 1) * 1000
  const safetyMs = Math.min(2_000, lifetimeMs * 0.05)
  const marginMs = Math.min(Math.max(refreshMarginS * 1000, 2 * safetyMs), lifetimeMs / 2)
  const jitterMaxMs = Math.min(marginMs / 4, 60_000)
  return { minMs: lifetimeMs - marginMs - jitterMaxMs, maxMs: lifetimeMs - marginMs }
}

/**
 * `tokenRequests`: { env: [epoch ms] }; `startedMs`/`endedMs`: when the proxy started / the run ended.
 * `requests`: the upstream's counters. `perWindow: false` (the proxy was restarted during the run,
 * each new process asking at its start) checks only what the upstream saw, and says it skipped the rest.
 */
export function checkTokens ({ tokenRequests, requests, tokenRejected, startedMs, endedMs, tokenLifetimeS, refreshMarginS, perWindow = true }) {
  const { minMs, maxMs } = refreshIntervalMs(tokenLifetimeS, refreshMarginS)
  const environments = {}
  let ok = requests.unknownToken === 0 && requests.expiredToken === 0 && requests.missingAuthorization === 0 && tokenRejected === 0
  for (const [environment, times] of perWindow ? Object.entries(tokenRequests) : []) {
    const problems = []
    const gaps = times.slice(1).map((t, i) => t - times[i])
    if (times.length === 0) problems.push('no token request at all')
    else if (times[0] - startedMs > 10_000) problems.push('first token request came late')
    for (const gap of gaps) {
      if (gap < minMs - TOLERANCE_EARLY_MS) problems.push(`two token requests ${(gap / 1000).toFixed(1)} s apart (more than one in a refresh window)`)
      if (gap > maxMs + TOLERANCE_LATE_MS) problems.push(`a refresh was missed (${(gap / 1000).toFixed(1)} s without a token request)`)
    }
    const last = times.at(-1)
    if (last !== undefined && endedMs - last > maxMs + TOLERANCE_LATE_MS) problems.push('the last refresh is overdue')
    if (problems.length > 0) ok = false
    environments[environment] = {
      tokenRequests: times.length,
      gapsS: gaps.map((g) => Math.round(g / 100) / 10),
      problems,
    }
  }
  return {
    ok,
    skipped: !perWindow,
    expectedGapS: [Math.round(minMs / 100) / 10, Math.round(maxMs / 100) / 10],
    windowsElapsed: Math.round(((endedMs - startedMs) / ((minMs + maxMs) / 2)) * 10) / 10,
    environments,
    upstreamSaw: { ...requests, tokenRejected },
  }
}
