/**
 * Picks the StateStore from Config (SPEC §9): Redis when PROXY_REDIS_URL (or its _FILE) is set, so
 * replicas share one set of records and limits; otherwise memory, one process's own.
 */
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { Storage } from '../storage/storage.js'
import { createMemoryStore } from './memory-store.js'
import type { StateStore } from './state-store.js'
import { noStoreObserver, type StoreObserver } from './store-metrics.js'

export interface StoreDeps {
  clock: Clock
  log: Logger
  /** The process's storage: its Redis connection when PROXY_REDIS_URL is set. */
  storage: Storage
  observer?: StoreObserver
}

/** Redis (and ioredis) is loaded only when configured: a one-replica sidecar never pays its start-up. */
export async function createStore (deps: StoreDeps): Promise<StateStore> {
  const observer = deps.observer ?? noStoreObserver
  const redis = await deps.storage.redis()
  if (redis === null) {
    observer.up('memory', true)
    return createMemoryStore({ clock: deps.clock })
  }
  const { createRedisStore } = await import('./redis-store.js')
  return createRedisStore({ redis, log: deps.log, observer })
}
