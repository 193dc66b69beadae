/**
 * Prometheus metrics (prom-client) on a registry of our own, names prefixed
 * `payments_auth_proxy_` with units in the name, labels of bounded cardinality only (never a
 * path, never a request id). The token source and the routes report through observers.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { EnvironmentName } from '../config/config.js'
import type { TokenObserver, TokenSource } from '../tokens/token-source.js'
import type { Clock } from '../clock.js'

export const METRIC_PREFIX = 'payments_auth_proxy_'

export interface ProxyMetrics {
  registry: Registry
  tokenObserver: TokenObserver
  /**
   * Every answer to a proxy route, the provider's and the proxy's own (`code`: its x-proxy-error, '' for the
   * provider's).
   */
  requestAnswered(environment: string, iface: string, status: number, caller: string, code: string): void
  /** Only requests that were forwarded: the time the upstream took. */
  upstreamCompleted(environment: string, iface: string, durationS: number): void
  ipNotAllowed(environment: string, iface: string): void
  egressIp(ip: string | null, expected: boolean | null): void
}

export function createMetrics (sources: () => ReadonlyMap<EnvironmentName, TokenSource>, clock: Clock): ProxyMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX })
  const p = METRIC_PREFIX

  // Each request costs one inc() and one observe() with label validation: prom-client's own types,
  // rather than counters of our own read through its internals (their cost: docs/performance.md).
  const requests = new Counter({
    name: `${p}requests_total`,
    help: 'Answers to proxy routes, forwarded or the proxy\'s own, by environment, interface, status class, caller and proxy error code (empty for the provider\'s answers)',
    labelNames: ['environment', 'interface', 'status_class', 'caller', 'code'],
    registers: [registry],
  })
  const duration = new Histogram({
    name: `${p}upstream_duration_seconds`,
    help: 'Time from forwarding a request to the end of its response',
    labelNames: ['environment', 'interface'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  })
  const refreshes = new Counter({
    name: `${p}token_refreshes_total`, help: 'Token requests by outcome (success, unchanged, failure) and failure reason', labelNames: ['environment', 'outcome', 'reason'], registers: [registry],
  })
  const inflight = new Gauge({
    name: `${p}token_requests_in_flight`, help: 'Token requests currently in flight (at most 1 per environment)', labelNames: ['environment'], registers: [registry],
  })
  const tokenWait = new Histogram({
    name: `${p}token_wait_seconds`, help: 'Time requests waited for a token because none was usable', labelNames: ['environment'], registers: [registry],
    buckets: [0.001, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10],
  })
  // Registered on construction; its values are computed when scraped.
  new Gauge({
    name: `${p}token_expiry_seconds`, help: 'Seconds until the current token of each environment expires (0 when none)', labelNames: ['environment'], registers: [registry],
    collect () {
      const now = clock.monotonicMs()
      for (const [name, source] of sources()) {
        const grant = source.currentGrant()
        this.set({ environment: name }, grant === null ? 0 : Math.max(0, (grant.expiresAtMs - now) / 1000))
      }
    },
  })
  const ipNotAllowed = new Counter({
    name: `${p}ip_not_allowed_total`, help: 'Upstream responses that carried IP_NOT_ALLOWED', labelNames: ['environment', 'interface'], registers: [registry],
  })
  const egressInfo = new Gauge({
    name: `${p}egress_ip_info`, help: 'The egress IP last seen by the IP echo service (value 1)', labelNames: ['ip'], registers: [registry],
  })
  // Registered only while there is an answer: prom-client reports a gauge without labels as 0
  // even after reset(), which would page everyone who never set PROXY_EXPECTED_EGRESS_IPS.
  const egressExpectedName = `${p}egress_ip_expected`
  const egressExpected = new Gauge({
    name: egressExpectedName, help: '1 when the egress IP is in PROXY_EXPECTED_EGRESS_IPS, 0 when not, absent when not configured', registers: [],
  })

  return {
    registry,
    tokenObserver: {
      refreshed: (environment, outcome, reason) => { refreshes.inc({ environment, outcome, reason: reason ?? '' }) },
      requestStarted: (environment) => { inflight.inc({ environment }) },
      requestEnded: (environment) => { inflight.dec({ environment }) },
      waited: (environment, ms) => { tokenWait.observe({ environment }, ms / 1000) },
    },
    requestAnswered (environment, iface, status, caller, code) {
      requests.inc({ environment, interface: iface, status_class: `${Math.floor(status / 100)}xx`, caller, code })
    },
    upstreamCompleted (environment, iface, durationS) {
      duration.observe({ environment, interface: iface }, durationS)
    },
    ipNotAllowed (environment, iface) { ipNotAllowed.inc({ environment, interface: iface }) },
    egressIp (ip, expected) {
      egressInfo.reset()
      if (ip !== null) egressInfo.set({ ip }, 1)
      const registered = registry.getSingleMetric(egressExpectedName) !== undefined
      if (expected === null) {
        if (registered) registry.removeSingleMetric(egressExpectedName)
        return
      }
      if (!registered) registry.registerMetric(egressExpected)
      egressExpected.set(expected ? 1 : 0)
    },
  }
}
