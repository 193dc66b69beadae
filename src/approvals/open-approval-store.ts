/**
 * Opens the approvals' store from the configuration (SPEC §11): Redis when PROXY_REDIS_URL is set
 * (replicas share the approvals), else the embedded file at PROXY_WEBHOOK_STORE_PATH. Each is loaded
 * only when used; the sidecar and the operator commands share this.
 */
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import { openConfiguredStore } from '../storage/open-store.js'
import type { Storage } from '../storage/storage.js'
import type { ApprovalStore } from './approval-store.js'

export async function openApprovalStore (config: Pick<Config, 'approvals'>, storage: Storage, log: Logger): Promise<ApprovalStore> {
  return await openConfiguredStore<ApprovalStore>(storage, {
    inRedis: async (redis) => await (await import('./redis-approval-store.js')).createRedisApprovalStore({ redis, log }),
    inFile: { what: 'approvals', path: config.approvals.storePath, open: async (path) => await (await import('./sqlite-approval-store.js')).createSqliteApprovalStore(path) },
  })
}
