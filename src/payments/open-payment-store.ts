/**
 * Opens the payments' store from the configuration (SPEC §12): Redis when PROXY_REDIS_URL is set
 * (replicas share the payments), else the embedded file at PROXY_WEBHOOK_STORE_PATH, each loaded
 * only when used, behind the seals (sealed-payment-store.ts), so the sidecar and the operator
 * commands read and write only sealed records.
 */
import type { Logger } from 'pino'
import type { PaymentsConfig } from '../config/payment-config.js'
import { openConfiguredStore } from '../storage/open-store.js'
import type { Storage } from '../storage/storage.js'
import { derivePaymentSealKey } from './payment-seal.js'
import type { PaymentStore } from './payment-store.js'
import { sealedPaymentStore } from './sealed-payment-store.js'

export async function openPaymentStore (payments: Pick<PaymentsConfig, 'storePath' | 'sealingSecret'>, storage: Storage, log: Logger): Promise<PaymentStore> {
  return sealedPaymentStore(
    await openStoredPayments(payments, storage, log),
    derivePaymentSealKey(payments.sealingSecret),
    log,
  )
}

async function openStoredPayments (payments: Pick<PaymentsConfig, 'storePath'>, storage: Storage, log: Logger): Promise<PaymentStore> {
  return await openConfiguredStore<PaymentStore>(storage, {
    inRedis: async (redis) => await (await import('./redis-payment-store.js')).createRedisPaymentStore({ redis, log }),
    inFile: { what: 'payments', path: payments.storePath, open: async (path) => await (await import('./sqlite-payment-store.js')).createSqlitePaymentStore(path) },
  })
}
