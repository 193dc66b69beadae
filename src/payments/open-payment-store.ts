/**
 * Opens the payments' store from the configuration (SPEC §12): Redis when PROXY_REDIS_URL is set
 * (replicas share the payments), else the embedded file at PROXY_WEBHOOK_STORE_PATH. Each is loaded
 * only when used; the sidecar and the operator commands share this.
 */
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import type { PaymentsConfig } from '../config/payment-config.js'
import { OperatorError } from '../operator-error.js'
import type { PaymentStore } from './payment-store.js'

export async function openPaymentStore (payments: Pick<PaymentsConfig, 'storePath'>, state: Config['state'], log: Logger): Promise<PaymentStore> {
  if (state.redisUrl !== null) {
    const { createRedisPaymentStore } = await import('./redis-payment-store.js')
    return await createRedisPaymentStore({ url: state.redisUrl, keyPrefix: state.keyPrefix, log })
  }
  const { createSqlitePaymentStore } = await import('./sqlite-payment-store.js')
  try {
    return await createSqlitePaymentStore(payments.storePath)
  } catch (err) {
    const code = (err as { code?: unknown }).code
    throw new OperatorError(`the payments store PROXY_WEBHOOK_STORE_PATH=${payments.storePath} cannot be opened (${typeof code === 'string' ? `${code}: ` : ''}${(err as Error).message}); its directory must exist or be creatable, on a writable volume, and be writable by this user`, { cause: err })
  }
}
