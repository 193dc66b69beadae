/**
 * Opens the console's sign-in store from the configuration (SPEC §14): Redis when PROXY_REDIS_URL is
 * set, else the embedded file at PROXY_WEBHOOK_STORE_PATH, as approvals do. The sidecar and the
 * `console-link` command share it; each implementation is loaded only when used.
 */
import type { Logger } from 'pino'
import type { ConsoleConfig } from '../config/console-settings.js'
import { openConfiguredStore } from '../storage/open-store.js'
import type { Storage } from '../storage/storage.js'
import type { SigninStore } from './signin-store.js'

export async function openSigninStore (settings: Pick<ConsoleConfig, 'storePath'>, storage: Storage, log: Logger): Promise<SigninStore> {
  return await openConfiguredStore<SigninStore>(storage, {
    inRedis: async (redis) => await (await import('./redis-signin-store.js')).createRedisSigninStore({ redis, log }),
    inFile: { what: 'console sign-in', path: settings.storePath, open: async (path) => await (await import('./sqlite-signin-store.js')).createSqliteSigninStore(path) },
  })
}
