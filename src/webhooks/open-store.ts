/** Opens the inbox's outbox store from its settings; the sidecar and the operator commands share it. */
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import type { WebhookConfig } from '../config/webhook-config.js'
import { openStoreFile } from '../sqlite/store-file-error.js'
import { openOutboxStore } from '../outbox/open-outbox-store.js'
import type { OutboxStore } from '../outbox/outbox-store.js'

const REDIS_CONNECT_WAIT_MS = 5_000

export interface OpenStoreOptions {
  /** SPEC §9's shared store: with a URL, the inbox lives in Redis and replicas share it. */
  state: Config['state']
  log: Logger
}

/** Redis when PROXY_REDIS_URL is set, else the embedded SQLite file at PROXY_WEBHOOK_STORE_PATH. */
export async function openStore (settings: WebhookConfig, options: OpenStoreOptions): Promise<OutboxStore> {
  const bounds = { retentionMs: settings.retentionS * 1000, maxEvents: settings.storeMaxEvents, maxBytes: settings.storeMaxBytes, orderMaxWaitMs: settings.orderMaxWaitS * 1000 }
  if (options.state.redisUrl !== null) {
    const store = await openOutboxStore({ redisUrl: options.state.redisUrl, keyPrefix: options.state.keyPrefix, log: options.log }, bounds)
    // A command's first read needs the connection; a sidecar starts anyway when Redis is down (intake answers 503).
    const deadline = Date.now() + REDIS_CONNECT_WAIT_MS
    while (!store.ready() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    return store
  }
  return await openStoreFile('webhook', `PROXY_WEBHOOK_STORE_PATH=${settings.storePath}`, async () => await openOutboxStore({ path: settings.storePath, log: options.log }, bounds))
}
