/** One TokenSource per enabled environment (SPEC §3: one token per environment), from Config. */
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { Config, EnvironmentName } from '../config/config.js'
import type { FetchToken } from './token-client.js'
import { TokenSource, type TokenObserver } from './token-source.js'

export interface TokenSourcesDeps {
  fetchToken: FetchToken
  clock: Clock
  log: Logger
  observer: TokenObserver
  random?: (() => number) | undefined
}

export function createTokenSources (config: Config, deps: TokenSourcesDeps): Map<EnvironmentName, TokenSource> {
  const sources = new Map<EnvironmentName, TokenSource>()
  for (const environment of Object.values(config.environments)) {
    sources.set(environment.name, new TokenSource({
      environment,
      fetchToken: deps.fetchToken,
      clock: deps.clock,
      log: deps.log,
      random: deps.random,
      observer: deps.observer,
      settings: {
        refreshMarginMs: config.token.refreshMarginS * 1000,
        retryMinMs: config.token.retryMinS * 1000,
        retryMaxMs: config.token.retryMaxS * 1000,
      },
    }))
  }
  return sources
}
