/** Opens the inbox's outbox store from its settings; the sidecar and the operator commands share it. */
import type { Logger } from 'pino'
import type { WebhookConfig } from '../config/webhook-config.js'
import { openConfiguredStore } from '../storage/open-store.js'
import type { Storage } from '../storage/storage.js'
import { openOutboxStore } from '../outbox/open-outbox-store.js'
import type { OutboxStore } from '../outbox/outbox-store.js'

const REDIS_CONNECT_WAIT_MS = 5_000

export interface OpenStoreOptions {
  /** The process's storage: with SPEC §9's Redis, the inbox lives there and replicas share it. */
  storage: Storage
  log: Logger
}

/** Redis when PROXY_REDIS_URL is set, else the embedded SQLite file at PROXY_WEBHOOK_STORE_PATH. */
export async function openStore (settings: WebhookConfig, options: OpenStoreOptions): Promise<OutboxStore> {
  const bounds = {
    retentionMs: settings.retentionS * 1000,
    maxEvents: settings.storeMaxEvents,
    maxBytes: settings.storeMaxBytes,
    orderMaxWaitMs: settings.orderMaxWaitS * 1000,
  }
  return await openConfiguredStore<OutboxStore>(options.storage, {
    inRedis: async (redis) => {
      const store = await openOutboxStore({ redis, keys: '', log: options.log }, bounds)
      // A command's first read needs the connection; a sidecar starts anyway when Redis is down (intake answers 503).
      await redis.untilReady(REDIS_CONNECT_WAIT_MS)
      return store
    },
    inFile: { what: 'webhook', path: settings.storePath, open: async (path) => await openOutboxStore({ path, log: options.log }, bounds) },
  })
}
