/**
 * Set-ups shared by the token and resilience tests: a fake provider and a proxy on one driven
 * fake clock (only the sandbox environment, so every token request counted is that one's), and
 * small readers for what the fake upstream recorded.
 */
import type { Test } from 'tap'
import type { Env } from '../../src/load-config.js'
import type { FakeProvider, UpstreamRequestRecord } from '../../src/fake-provider/index.js'
import { METRIC_PREFIX } from '../../src/ops/metrics.js'
import type { ServerDeps } from '../../src/server.js'
import { providerEnv, startProvider, startProxy, type RunningProxy } from '../helpers/harness.js'
import { TimeDriver } from './time-driver.js'

/** Only sandbox is enabled: one token source, one token endpoint to count. */
export const SANDBOX_ONLY: Env = { PAYMENTS_PRODUCTION_API_KEY: undefined, PAYMENTS_PRODUCTION_PUBLIC_KEY: undefined }

export interface TimedSetup {
  driver: TimeDriver
  provider: FakeProvider
  proxy: RunningProxy
}

export interface TimedOptions {
  tokenLifetimeSeconds?: number
  /** The provider's clock; default: our fake wall clock. */
  providerNow?: (driver: TimeDriver) => () => number
  env?: Env
  deps?: Partial<ServerDeps>
  /** Runs before the proxy starts, e.g. to install a fault that the start-up token request meets. */
  prepare?: (provider: FakeProvider) => void
  /** Waits for the start-up token request to finish (default true). */
  settle?: boolean
}

export async function startTimed (t: Test, options: TimedOptions = {}): Promise<TimedSetup> {
  const driver = new TimeDriver()
  const provider = await startProvider(t, {
    tokenLifetimeSeconds: options.tokenLifetimeSeconds ?? 7200,
    now: options.providerNow?.(driver) ?? (() => driver.wallMs()),
  })
  options.prepare?.(provider)
  const proxy = await startProxy(t, providerEnv(provider, { ...SANDBOX_ONLY, ...options.env }), {
    clock: driver,
    random: () => 0,
    ...options.deps,
  })
  driver.watch(() => metricSum(proxy, 'token_requests_in_flight'))
  if (options.settle ?? true) await driver.idle()
  return { driver, provider, proxy }
}

/** The bearer token an upstream request carried. */
export function bearerOf (record: UpstreamRequestRecord | undefined): string | undefined {
  return /^Bearer (.+)$/.exec(record?.headers.authorization ?? '')?.[1]
}

export interface ProxyAnswer { status: number, headers: Headers, body: string }

export async function send (proxy: RunningProxy, path: string, init: RequestInit = {}): Promise<ProxyAnswer> {
  const res = await fetch(proxy.url + path, { redirect: 'manual', ...init })
  return { status: res.status, headers: res.headers, body: await res.text() }
}

/**
 * Sum of a proxy metric's samples (name without prefix; `_count` and the like for histograms),
 * optionally only those with the given labels. Read from the proxy's own registry.
 */
export async function metricSum (proxy: RunningProxy, name: string, labels: Record<string, string> = {}): Promise<number> {
  const [family, suffix] = name.endsWith('_count') ? [name.slice(0, -'_count'.length), name] : [name, name]
  const metric = proxy.metrics.registry.getSingleMetric(METRIC_PREFIX + family)
  if (metric === undefined) throw new Error(`no metric ${family}`)
  const { values } = await metric.get()
  return values
    .filter((v) => ((v as { metricName?: string }).metricName ?? METRIC_PREFIX + suffix) === METRIC_PREFIX + suffix)
    .filter((v) => Object.entries(labels).every(([k, l]) => (v.labels as Record<string, unknown>)[k] === l))
    .reduce((sum, v) => sum + v.value, 0)
}
