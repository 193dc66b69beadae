/**
 * Notifications of payments (SPEC §12) to PROXY_PAYMENTS_NOTIFY_URL (default the inbox's
 * application): `payment.succeeded`, `payment.failed`, `payment.stale`, each stored and delivered by
 * a notification outbox of their own (outbox/: its own file or Redis prefix), so they are signed the
 * Standard Webhooks way with PROXY_WEBHOOK_SIGNING_SECRET and retried on §10's schedule across
 * restarts. A notification's key is its type and the payment's id, so telling the outbox twice (a
 * crash between storing it and recording that on the payment) delivers it once; `webhook-id` is the
 * notification's own id. Kept as long as settled payments are.
 */
import { dirname, join } from 'node:path'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import type { Clock } from '../clock.js'
import type { PaymentsConfig } from '../config/payment-config.js'
import { METRIC_PREFIX } from '../ops/metrics.js'
import { workerPasses } from '../ops/worker-passes.js'
import type { Storage } from '../storage/storage.js'
import type { NotificationType } from './payment-record.js'
import type { PaymentView } from './payment-view.js'

export interface PaymentNotifier {
  /** Resolves once the notification is stored (durably); true when newly stored, false when it was already. */
  notify: (type: NotificationType, payment: PaymentView) => Promise<boolean>
  start: () => void
  stop: () => Promise<void>
}

export async function openPaymentNotifier (
  config: PaymentsConfig,
  storage: Storage,
  deps: { log: Logger, clock: Clock, registry: Registry },
): Promise<PaymentNotifier> {
  const [{ openNotificationOutbox }, { deriveNotificationSealKey }, { noDeliveryObserver }] = await Promise.all([import('../outbox/notification-outbox.js'), import('../outbox/notification-seal.js'), import('../outbox/deliverer.js')])
  const redis = await storage.redis()
  const outbox = await openNotificationOutbox({
    name: 'payments',
    url: config.notifyUrl,
    signingSecrets: config.signingSecrets,
    retryScheduleMs: config.retryScheduleMs,
    retentionS: config.retentionS,
    // Its own file beside the payments', or its own key prefix: the inbox's events stay the inbox's.
    store: redis !== null ? { redis, keys: 'payn:' } : { path: join(dirname(config.storePath), 'payment-notifications.db') },
    log: deps.log,
    clock: deps.clock,
    observer: { ...noDeliveryObserver, pass: workerPasses(deps.registry, METRIC_PREFIX, 'payment_notifications') },
    // The application releases goods on these: an edited one in the outbox is never sent (SPEC §12 "Sealed").
    sealKey: deriveNotificationSealKey(config.sealingSecret),
  })
  return {
    async notify (type, payment) {
      // One payment's notifications go in the order they were made (stale, then settled after a recheck).
      const { id, stored } = await outbox.notify(type, payment.id, payment.id, { payment })
      if (stored) deps.log.info({ payment: payment.id, caller: payment.caller, reference: payment.externalReference, type, notification: id }, 'payment notification stored')
      return stored
    },
    start: () => { outbox.start() },
    stop: async () => { await outbox.stop() },
  }
}
