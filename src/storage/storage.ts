/**
 * What a process's stores are opened with (issue 57, "one storage layer"): its one Redis connection
 * (redis-connection.ts), opened at the first store's need and shared by every store after it, and
 * closed by whoever made the Storage once its stores are closed. The sidecar makes one for its
 * main thread (process/serve.ts), the inbox's thread one of its own (an isolate cannot share a socket), each
 * operator command and `check` one; server.ts and inbox-server.ts make one when not given it (the
 * tests' in-process replicas, each with its own connection as a replica would have).
 *
 * ioredis is loaded only at the first use: a sidecar without PROXY_REDIS_URL never loads it.
 */
import type { Config } from '../config/config.js'
import type { RedisConnection } from './redis-connection.js'

export interface Storage {
  /**
   * The process's Redis connection, the same for every store; null without PROXY_REDIS_URL (each store then has its
   * file, or memory).
   */
  readonly redis: () => Promise<RedisConnection | null>
  /** Once every store opened with it is closed. */
  readonly close: () => Promise<void>
}

/** `role` names the connection (`pap:<role>`, CLIENT SETNAME): `sidecar`, `inbox`, `check`, a command's name. */
export function createStorage (state: Config['state'], role: string): Storage {
  const { redisUrl, keyPrefix } = state
  let opened: Promise<RedisConnection> | null = null
  return {
    async redis () {
      if (redisUrl === null) return null
      opened ??= import('./redis-connection.js').then(({ openRedisConnection }) => openRedisConnection({ url: redisUrl, keyPrefix, role }))
      return await opened
    },
    async close () {
      const connection = opened
      opened = null
      if (connection !== null) (await connection).close()
    },
  }
}
