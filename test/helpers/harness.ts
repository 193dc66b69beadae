/**
 * Starts the real thing for a test: the fake provider on port 0 and the proxy built from a
 * Config (never from process.env), listening on 127.0.0.1 port 0, with every log line captured
 * so tests can assert on logs and scan them for secrets. Teardown is registered on `t`.
 */
import { Writable } from 'node:stream'
import pino from 'pino'
import type { Test } from 'tap'
import { DEMO_CREDENTIALS, proxyEnvFor, startFakeProvider, type FakeProvider, type FakeProviderOptions } from '../../src/fake-provider/index.js'
import { loadConfig, type Env } from '../../src/load-config.js'
import type { Config } from '../../src/config/config.js'
import { loggerOptions } from '../../src/logger.js'
import { buildServer, type ProxyServer, type ServerDeps } from '../../src/server.js'
import { eventually } from './eventually.js'

export class LogCapture extends Writable {
  readonly lines: string[] = []
  override _write (chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line !== '') this.lines.push(line)
    done()
  }

  get records (): Array<Record<string, unknown>> {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>)
  }

  find (msg: string): Array<Record<string, unknown>> {
    return this.records.filter((r) => r['msg'] === msg)
  }
}

export function captureLogger (level = 'trace'): { logger: pino.Logger, logs: LogCapture } {
  const logs = new LogCapture()
  return { logger: pino(loggerOptions(level), logs), logs }
}

export async function startProvider (t: Test, options: FakeProviderOptions = {}): Promise<FakeProvider> {
  const provider = await startFakeProvider(options)
  t.teardown(() => provider.close())
  return provider
}

/** Variables for a proxy in front of `provider`, both environments enabled unless overridden. */
export function providerEnv (provider: FakeProvider, overrides: Env = {}): Env {
  return {
    ...proxyEnvFor(provider),
    PROXY_EGRESS_IP_URL: 'off',
    PROXY_PORT: '0',
    ...overrides,
  }
}

export interface RunningProxy extends ProxyServer {
  url: string
  port: number
  config: Config
  logs: LogCapture
}

export async function startProxy (t: Test, env: Env, deps: Partial<ServerDeps> = {}): Promise<RunningProxy> {
  const { config } = loadConfig(env)
  const { logger, logs } = captureLogger(config.logLevel === 'info' ? 'trace' : config.logLevel)
  const server = await buildServer(config, { logger, ...deps })
  t.teardown(() => server.app.close())
  await server.app.listen({ host: '127.0.0.1', port: 0 })
  const address = server.app.server.address()
  if (address === null || typeof address === 'string') throw new Error('proxy did not listen on TCP')
  return { ...server, url: `http://127.0.0.1:${address.port}`, port: address.port, config, logs }
}

/** Waits until every enabled environment holds a token (the start-up fetch is asynchronous). */
export async function waitReady (proxy: RunningProxy, timeoutMs = 5000): Promise<void> {
  await eventually(() => [...proxy.sources.values()].every((s) => s.status().ready), { what: 'a token for every environment', timeoutMs, everyMs: 5 })
}

export { DEMO_CREDENTIALS }
