/**
 * The core's long-lived services: one token source per environment (SPEC §2), the egress IP report
 * (SPEC §5) and the credential rotation a reload drives. Built once the features' parts are, so a
 * feature that refuses the start leaves no timer behind.
 */
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { Config, EnvironmentName } from '../config/config.js'
import { createEgressReporter, type EgressReporter } from '../egress/egress-reporter.js'
import { createCredentialRotation, type CredentialRotation } from '../ops/credential-rotation.js'
import { METRIC_PREFIX, type ProxyMetrics } from '../ops/metrics.js'
import type { Outbound } from '../outbound/outbound-agents.js'
import type { FetchToken } from '../tokens/token-client.js'
import type { TokenSource } from '../tokens/token-source.js'
import { createTokenSources } from '../tokens/token-sources.js'

export interface CoreServicesDeps {
  config: Config
  clock: Clock
  log: Logger
  outbound: Outbound
  fetchToken: FetchToken
  metrics: ProxyMetrics
  random: (() => number) | undefined
}

export interface CoreServices {
  sources: Map<EnvironmentName, TokenSource>
  egress: EgressReporter
  rotation: CredentialRotation
}

export function createCoreServices (
  { config, clock, log, outbound, fetchToken, metrics, random }: CoreServicesDeps,
): CoreServices {
  const sources = createTokenSources(config, { fetchToken, clock, log, random, observer: metrics.tokenObserver })
  const egress = createEgressReporter({
    url: config.egress.url,
    intervalMs: config.egress.intervalS * 1000,
    expectedIps: config.egress.expectedIps,
    dispatcher: outbound.upstream,
    clock,
    log,
    onUpdate: (ip, expected) => { metrics.egressIp(ip, expected) },
  })
  const rotation = createCredentialRotation({
    sources,
    fetchToken,
    log,
    registry: metrics.registry,
    metricPrefix: METRIC_PREFIX,
    nowS: () => Math.floor(clock.wallMs() / 1000),
  })
  return { sources, egress, rotation }
}
