/** Opens the inbox's store from its settings; the sidecar and the operator commands share it. */
import type { WebhookConfig } from '../config/webhook-config.js'
import type { InboxStore } from './inbox-store.js'

/**
 * The embedded SQLite store, loaded only when the inbox is on (cli.ts imports this module lazily,
 * and better-sqlite3 is a native module outside the bundle). `ownLeases`: the sidecar's own
 * deliveries; the operator commands open the file without it.
 */
export async function openStore (settings: WebhookConfig, options: { ownLeases: boolean }): Promise<InboxStore> {
  const { createSqliteStore } = await import('./sqlite-store.js')
  return createSqliteStore({
    path: settings.storePath, retentionMs: settings.retentionS * 1000, maxEvents: settings.storeMaxEvents, maxBytes: settings.storeMaxBytes, ownLeases: options.ownLeases,
  })
}
