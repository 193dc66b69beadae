/**
 * Where a store lives (SPEC §9, §10): in the process's Redis when PROXY_REDIS_URL is set (replicas
 * share it), else in the embedded file at PROXY_WEBHOOK_STORE_PATH, whose failure to open is the one
 * sentence of sqlite/store-file-error.ts. Each implementation is loaded only when chosen.
 */
import { openStoreFile } from '../sqlite/store-file-error.js'
import type { RedisConnection } from './redis-connection.js'
import type { Storage } from './storage.js'

export interface StoreChoices<T> {
  inRedis: (redis: RedisConnection) => Promise<T>
  /** `what` names the store in the sentence (`the approvals store PROXY_WEBHOOK_STORE_PATH=… cannot be opened`). */
  inFile: { what: string, path: string, open: (path: string) => Promise<T> }
}

export async function openConfiguredStore<T> (storage: Storage, { inRedis, inFile }: StoreChoices<T>): Promise<T> {
  const redis = await storage.redis()
  if (redis !== null) return await inRedis(redis)
  const { what, path, open } = inFile
  return await openStoreFile(what, `PROXY_WEBHOOK_STORE_PATH=${path}`, async () => await open(path))
}
