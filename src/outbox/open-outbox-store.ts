/**
 * Opens an outbox's store: in Redis when a URL is given (several replicas share it), else in its own
 * SQLite file. Each implementation is loaded only here, only then: a proxy without an inbox or
 * notifications loads neither, and better-sqlite3 is a native module outside the bundle.
 */
import type { Logger } from 'pino'
import type { RedisConnection } from '../storage/redis-connection.js'
import type { OutboxStore } from './outbox-store.js'

export type OutboxStoreLocation =
  /** The process's connection; every key starts with its prefix and `keys` (redis-store.ts). */
  | { redis: RedisConnection, keys: string, log: Logger }
  | { path: string, log: Logger }

export interface OutboxBounds {
  /** Delivered and failed events, and duplicates, are kept this long from their receipt. */
  retentionMs: number
  maxEvents: number
  maxBytes: number
  /** How long a later event of an order key waits behind its head before it goes out of order. */
  orderMaxWaitMs: number
}

export async function openOutboxStore (location: OutboxStoreLocation, bounds: OutboxBounds): Promise<OutboxStore> {
  if ('redis' in location) {
    const { createRedisOutboxStore } = await import('./redis-store.js')
    return createRedisOutboxStore({ redis: location.redis, keys: location.keys, log: location.log, ...bounds })
  }
  const { createSqliteStore } = await import('./sqlite-store.js')
  return await createSqliteStore({ path: location.path, log: location.log, ...bounds })
}
