/**
 * Shared set-up of the hostile-input tests: the fake provider with a ready proxy in front of it,
 * and the assertions every BAD_INPUTS row makes: the status and `x-proxy-error` code, nothing
 * forwarded upstream, no token request caused by a client path, and the proxy still serving.
 */
import { createServer } from 'node:net'
import type { Test } from 'tap'
import type { Env } from '../../src/load-config.js'
import type { FakeProvider } from '../../src/fake-provider/index.js'
import { DEMO_CREDENTIALS, providerEnv, startProvider, startProxy, waitReady, type RunningProxy } from '../helpers/harness.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { exchange, request, type RawOptions, type RawResponse } from './raw-client.js'

export { assertProxyError }

export interface Rig {
  provider: FakeProvider
  proxy: RunningProxy
  /** Token requests made by the proxy at start (one per environment). */
  startupTokenRequests: number
}

/** Both environments, sandbox by default (harness defaults), ready to forward. */
export async function startRig (t: Test, overrides: Env = {}): Promise<Rig> {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, overrides))
  await waitReady(proxy)
  return { provider, proxy, startupTokenRequests: provider.tokenRequests.length }
}

export function send (rig: Rig, bytes: string | Buffer, options?: RawOptions): Promise<RawResponse> {
  return exchange(rig.proxy.port, bytes, options)
}

/** `GET <target>` from loopback, exactly as written. */
export function get (target: string, headers: string[] = []): string {
  return request('GET', target, headers)
}

/** Nothing reached the fiat/crypto servers and no client path reached the token endpoint. */
export function assertNothingForwarded (t: Test, rig: Rig, label: string): void {
  t.same(rig.provider.upstreamRequests.map((r) => r.url), [], `${label}: upstream never contacted`)
  t.equal(rig.provider.tokenRequests.length, rig.startupTokenRequests, `${label}: no token request`)
}

/** The proxy logged `msg` at warn level or above, and no log line so far holds a key or a token. */
export function assertWarned (t: Test, rig: Rig, msg: string, label: string): void {
  const levels = rig.proxy.logs.find(msg).map((r) => r['level'])
  t.ok(levels.some((level) => typeof level === 'number' && level >= 40), `${label}: logged "${msg}" as a warning`)
  const secrets = [
    ...Object.values(DEMO_CREDENTIALS).flatMap((c) => [c.apiKey, c.publicKey]),
    ...rig.provider.issuedTokens,
  ]
  const leaks = rig.proxy.logs.lines.filter((line) => secrets.some((secret) => line.includes(secret)))
  t.same(leaks, [], `${label}: no secret in the logs`)
}

/** A plain request right after the hostile one is forwarded as usual with the start-up token; the records are cleared. */
export async function assertStillServes (t: Test, rig: Rig, label: string, options?: RawOptions): Promise<void> {
  rig.provider.upstreamRequests.length = 0
  const res = await send(rig, get('/sandbox/fiat/v1/ping'), options)
  t.equal(res.status, 200, `${label}: next request still served`)
  t.same(rig.provider.upstreamRequests.map((r) => r.url), ['/api/sandbox/b2b/v1/ping'], `${label}: next request forwarded`)
  t.equal(rig.provider.tokenRequests.length, rig.startupTokenRequests, `${label}: still no token request beyond start-up`)
  rig.provider.upstreamRequests.length = 0
}

/** The common row of the catalog: sent raw, answered by the proxy with `code`, nothing forwarded, next request served. */
export async function assertRefused (t: Test, rig: Rig, bytes: string | Buffer, status: number, code: string, label: string): Promise<RawResponse> {
  const res = await send(rig, bytes)
  await assertProxyError(t, res, status, code, label)
  assertNothingForwarded(t, rig, label)
  await assertStillServes(t, rig, label)
  return res
}

/** A listening socket standing in for a host the proxy must never connect to; counts connections. */
export async function startForeignHost (t: Test): Promise<{ host: string, connections: () => number }> {
  let connections = 0
  const foreign = createServer((socket) => { connections++; socket.destroy() })
  await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => foreign.close(() => resolve())))
  const address = foreign.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  return { host: `127.0.0.1:${address.port}`, connections: () => connections }
}
