/**
 * Opens the approvals' store from the configuration (SPEC §11): Redis when PROXY_REDIS_URL is set
 * (replicas share the approvals), else the embedded file at PROXY_WEBHOOK_STORE_PATH. Each is loaded
 * only when used; the sidecar and the operator commands share this.
 */
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import { openStoreFile } from '../sqlite/store-file-error.js'
import type { Storage } from '../storage/storage.js'
import type { ApprovalStore } from './approval-store.js'

export async function openApprovalStore (config: Pick<Config, 'approvals'>, storage: Storage, log: Logger): Promise<ApprovalStore> {
  const redis = await storage.redis()
  if (redis !== null) {
    const { createRedisApprovalStore } = await import('./redis-approval-store.js')
    return await createRedisApprovalStore({ redis, log })
  }
  const { createSqliteApprovalStore } = await import('./sqlite-approval-store.js')
  const path = config.approvals.storePath
  return await openStoreFile('approvals', `PROXY_WEBHOOK_STORE_PATH=${path}`, async () => await createSqliteApprovalStore(path))
}
