/** Opens the inbox's store from its settings; the sidecar and the operator commands share it. */
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import type { WebhookConfig } from '../config/webhook-config.js'
import { OperatorError } from '../operator-error.js'
import type { InboxStore } from './inbox-store.js'

const REDIS_CONNECT_WAIT_MS = 5_000

export interface OpenStoreOptions {
  /** SPEC §9's shared store: with a URL, the inbox lives in Redis and replicas share it. */
  state: Config['state']
  log: Logger
}

/**
 * Redis when PROXY_REDIS_URL is set, else the embedded SQLite file. Each is loaded only when the
 * inbox is on (cli.ts imports the inbox lazily; better-sqlite3 is a native module outside the bundle).
 */
export async function openStore (settings: WebhookConfig, options: OpenStoreOptions): Promise<InboxStore> {
  if (options.state.redisUrl !== null) {
    const { createRedisInboxStore } = await import('./redis-inbox-store.js')
    const store = createRedisInboxStore({
      url: options.state.redisUrl, keyPrefix: options.state.keyPrefix, retentionMs: settings.retentionS * 1000, maxEvents: settings.storeMaxEvents, maxBytes: settings.storeMaxBytes,
      orderMaxWaitMs: settings.orderMaxWaitS * 1000, log: options.log,
    })
    // A command's first read needs the connection; a sidecar starts anyway when Redis is down (intake answers 503).
    const deadline = Date.now() + REDIS_CONNECT_WAIT_MS
    while (!store.ready() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    return store
  }
  const { createSqliteStore } = await import('./sqlite-store.js')
  try {
    return await createSqliteStore({
      path: settings.storePath, retentionMs: settings.retentionS * 1000, maxEvents: settings.storeMaxEvents, maxBytes: settings.storeMaxBytes, orderMaxWaitMs: settings.orderMaxWaitS * 1000,
    })
  } catch (err) {
    const code = (err as { code?: unknown }).code
    throw new OperatorError(`the webhook store PROXY_WEBHOOK_STORE_PATH=${settings.storePath} cannot be opened (${typeof code === 'string' ? `${code}: ` : ''}${(err as Error).message}); its directory must exist or be creatable, on a writable volume, and be writable by this user`, { cause: err })
  }
}
