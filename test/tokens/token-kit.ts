/**
 * Set-ups shared by the token and resilience tests: a fake provider and a proxy on one driven
 * fake clock (only the sandbox environment, so every token request counted is that one's), and
 * small readers for what the fake upstream recorded.
 */
import type { Test } from 'tap'
import type { Env } from '../../src/config/load-config.js'
import type { FakeProvider, UpstreamRequestRecord } from '../../src/fake-provider/index.js'
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
  /** Waits for the start-up token request to finish (default true). */
  settle?: boolean
}

export async function startTimed (t: Test, options: TimedOptions = {}): Promise<TimedSetup> {
  const driver = new TimeDriver()
  const provider = await startProvider(t, {
    tokenLifetimeSeconds: options.tokenLifetimeSeconds ?? 7200,
    now: options.providerNow?.(driver) ?? (() => driver.wallMs()),
  })
  const proxy = await startProxy(t, providerEnv(provider, { ...SANDBOX_ONLY, ...options.env }), {
    clock: driver,
    random: () => 0,
    tokenObserver: driver.observer,
    ...options.deps,
  })
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

/** Token requests seen by the provider (fiat host, any environment). */
export function tokenRequestTimes (provider: FakeProvider): number[] {
  return provider.tokenRequests.map((r) => r.at)
}
