/**
 * Picks the StateStore from Config (SPEC §9): Redis when PROXY_REDIS_URL (or its _FILE) is set, so
 * replicas share one set of records and limits; otherwise memory, one process's own.
 */
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { Config } from '../config/config.js'
import { createMemoryStore } from './memory-store.js'
import type { StateStore } from './state-store.js'
import { noStoreObserver, type StoreObserver } from './store-metrics.js'

export interface StoreDeps {
  clock: Clock
  log: Logger
  observer?: StoreObserver
}

/** Redis (and ioredis) is loaded only when configured: a one-replica sidecar never pays its start-up. */
export async function createStore (config: Pick<Config, 'state'>, deps: StoreDeps): Promise<StateStore> {
  const observer = deps.observer ?? noStoreObserver
  if (config.state.redisUrl === null) {
    observer.up('memory', true)
    return createMemoryStore({ clock: deps.clock })
  }
  const { createRedisStore } = await import('./redis-store.js')
  return createRedisStore({ url: config.state.redisUrl, keyPrefix: config.state.keyPrefix, log: deps.log, observer })
}
