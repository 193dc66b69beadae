/**
 * Notifications of payments (SPEC §12) to PROXY_PAYMENTS_NOTIFY_URL (default the inbox's
 * application): `payment.succeeded`, `payment.failed`, `payment.stale`, each stored and delivered by
 * the webhook inbox's own store and deliverer (a third instance of each, with its own file or Redis
 * prefix), so they are signed the Standard Webhooks way with PROXY_WEBHOOK_SIGNING_SECRET and retried
 * on §10's schedule across restarts. A notification's key is its type and the payment's id, so
 * telling the store twice (a crash between storing it and recording that on the payment) delivers
 * it once; `webhook-id` is the notification's own id. Kept as long as settled payments are.
 *
 * Thin on purpose: the delivery engine is the inbox's, and only `openPaymentNotifier` knows where.
 */
import { createHash } from 'node:crypto'
import { dirname, join } from 'node:path'
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { Config } from '../config/config.js'
import type { PaymentsConfig } from '../config/payment-config.js'
import { DEFAULT_WEBHOOK_DELIVERY_TIMEOUT_S, DEFAULT_WEBHOOK_STORE_MAX_BYTES, DEFAULT_WEBHOOK_STORE_MAX_EVENTS } from '../config/schema.js'
import type { NotificationType } from './payment-record.js'
import type { PaymentView } from './payment-view.js'

const CONCURRENCY = 4

export interface PaymentNotifier {
  /** Resolves once the notification is stored (durably); true when newly stored, false when it was already. */
  notify: (type: NotificationType, payment: PaymentView) => Promise<boolean>
  start: () => void
  stop: () => Promise<void>
}

export async function openPaymentNotifier (config: PaymentsConfig, state: Config['state'], deps: { log: Logger, clock: Clock }): Promise<PaymentNotifier> {
  const bounds = { retentionMs: config.retentionS * 1000, maxEvents: DEFAULT_WEBHOOK_STORE_MAX_EVENTS, maxBytes: DEFAULT_WEBHOOK_STORE_MAX_BYTES }
  const store = state.redisUrl !== null
    ? (await import('../webhooks/redis-inbox-store.js')).createRedisInboxStore({ url: state.redisUrl, keyPrefix: `${state.keyPrefix}payn:`, log: deps.log, ...bounds })
    // Its own file beside the payments': the inbox's events table stays the inbox's.
    : await (await import('../webhooks/sqlite-store.js')).createSqliteStore({ path: join(dirname(config.storePath), 'payment-notifications.db'), ...bounds })
  const { createDeliverer } = await import('../webhooks/deliverer.js')
  const { noInboxObserver } = await import('../webhooks/inbox-metrics.js')
  const deliverer = createDeliverer({
    settings: { deliverTo: config.notifyUrl, signingSecrets: config.signingSecrets, deliveryTimeoutS: DEFAULT_WEBHOOK_DELIVERY_TIMEOUT_S, concurrency: CONCURRENCY, retryScheduleMs: config.retryScheduleMs, retentionS: config.retentionS },
    store,
    log: deps.log,
    clock: deps.clock,
    observer: noInboxObserver,
  })
  return {
    async notify (type, payment) {
      const body = Buffer.from(JSON.stringify({ type, payment }))
      const outcome = await store.intake({
        key: `${type}:${payment.id}`,
        bodySha256: createHash('sha256').update(body).digest('hex'),
        // One payment's notifications go in the order they were made (stale, then settled after a recheck).
        orderKey: payment.id,
        body,
        headers: [['content-type', 'application/json']],
        source: 'payments',
        receivedAtMs: deps.clock.wallMs(),
      })
      if (outcome.kind === 'duplicate') return false
      deps.log.info({ payment: payment.id, caller: payment.caller, reference: payment.externalReference, type, notification: outcome.id }, 'payment notification stored')
      deliverer.wake()
      return true
    },
    start: () => { deliverer.start() },
    async stop () {
      await deliverer.stop()
      await store.close()
    },
  }
}
