/**
 * Opens the payments' store from the configuration (SPEC §12): Redis when PROXY_REDIS_URL is set
 * (replicas share the payments), else the embedded file at PROXY_WEBHOOK_STORE_PATH, each loaded
 * only when used, behind the seals (sealed-payment-store.ts), so the sidecar and the operator
 * commands read and write only sealed records.
 */
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import type { PaymentsConfig } from '../config/payment-config.js'
import { openStoreFile } from '../sqlite/store-file-error.js'
import { derivePaymentSealKey } from './payment-seal.js'
import type { PaymentStore } from './payment-store.js'
import { sealedPaymentStore } from './sealed-payment-store.js'

export async function openPaymentStore (payments: Pick<PaymentsConfig, 'storePath' | 'sealingSecret'>, state: Config['state'], log: Logger): Promise<PaymentStore> {
  return sealedPaymentStore(await openStoredPayments(payments, state, log), derivePaymentSealKey(payments.sealingSecret), log)
}

async function openStoredPayments (payments: Pick<PaymentsConfig, 'storePath'>, state: Config['state'], log: Logger): Promise<PaymentStore> {
  if (state.redisUrl !== null) {
    const { createRedisPaymentStore } = await import('./redis-payment-store.js')
    return await createRedisPaymentStore({ url: state.redisUrl, keyPrefix: state.keyPrefix, log })
  }
  const { createSqlitePaymentStore } = await import('./sqlite-payment-store.js')
  return await openStoreFile('payments', `PROXY_WEBHOOK_STORE_PATH=${payments.storePath}`, async () => await createSqlitePaymentStore(payments.storePath))
}
