/**
 * Opens the console's sign-in store from the configuration (SPEC §14): Redis when PROXY_REDIS_URL is
 * set, else the embedded file at PROXY_WEBHOOK_STORE_PATH, as approvals do. The sidecar and the
 * `console-link` command share it; each implementation is loaded only when used.
 */
import type { Logger } from 'pino'
import type { ConsoleConfig } from '../config/console-settings.js'
import { openStoreFile } from '../sqlite/store-file-error.js'
import type { Storage } from '../storage/storage.js'
import type { SigninStore } from './signin-store.js'

export async function openSigninStore (settings: Pick<ConsoleConfig, 'storePath'>, storage: Storage, log: Logger): Promise<SigninStore> {
  const redis = await storage.redis()
  if (redis !== null) {
    const { createRedisSigninStore } = await import('./redis-signin-store.js')
    return await createRedisSigninStore({ redis, log })
  }
  const { createSqliteSigninStore } = await import('./sqlite-signin-store.js')
  return await openStoreFile('console sign-in', `PROXY_WEBHOOK_STORE_PATH=${settings.storePath}`, async () => await createSqliteSigninStore(settings.storePath))
}
