/**
 * Notifications of approvals (SPEC §11) to PROXY_APPROVAL_NOTIFY_URL: `approval.requested`, then
 * `approval.approved`, `.rejected` or `.expired`, each stored and delivered by the webhook inbox's
 * own store and deliverer (a second instance of each, with their own file or Redis prefix, URL and
 * secret), so they are signed the Standard Webhooks way and retried on §10's schedule across
 * restarts. Signed with PROXY_APPROVAL_SIGNING_SECRET, never the inbox's secret: whoever receives
 * notifications cannot forge payment events to the application. A notification's key is its type
 * and approval id, so telling the store twice (the worker looks until a decision is settled)
 * delivers it once.
 */
import { createHash } from 'node:crypto'
import { dirname, join } from 'node:path'
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { Config } from '../config/config.js'
import { DEFAULT_WEBHOOK_DELIVERY_TIMEOUT_S, DEFAULT_WEBHOOK_ORDER_MAX_WAIT_S, DEFAULT_WEBHOOK_STORE_MAX_BYTES, DEFAULT_WEBHOOK_STORE_MAX_EVENTS } from '../config/schema.js'
import type { ApprovalView } from './approval-view.js'

export type NotificationType = 'approval.requested' | 'approval.approved' | 'approval.rejected' | 'approval.expired'

/** Delivered and failed notifications are kept this long (listed, and not sent twice). */
const RETENTION_S = 7 * 86400
const CONCURRENCY = 4

export interface ApprovalNotifier {
  /** Resolves true when the notification was newly stored (false: it was already). */
  notify: (type: NotificationType, approval: ApprovalView) => Promise<boolean>
  start: () => void
  stop: () => Promise<void>
}

/** Null without PROXY_APPROVAL_NOTIFY_URL. The inbox's modules are loaded only here, only then. */
export async function openApprovalNotifier (config: Pick<Config, 'approvals' | 'state'>, deps: { log: Logger, clock: Clock }): Promise<ApprovalNotifier | null> {
  const { notifyUrl, signingSecret, retryScheduleMs, storePath } = config.approvals
  if (notifyUrl === null || signingSecret === null) return null
  const bounds = { retentionMs: RETENTION_S * 1000, maxEvents: DEFAULT_WEBHOOK_STORE_MAX_EVENTS, maxBytes: DEFAULT_WEBHOOK_STORE_MAX_BYTES, orderMaxWaitMs: DEFAULT_WEBHOOK_ORDER_MAX_WAIT_S * 1000 }
  const store = config.state.redisUrl !== null
    ? (await import('../webhooks/redis-inbox-store.js')).createRedisInboxStore({ url: config.state.redisUrl, keyPrefix: `${config.state.keyPrefix}aprn:`, log: deps.log, ...bounds })
    // Its own file beside the approvals': the inbox's events table stays the inbox's.
    : await (await import('../webhooks/sqlite-store.js')).createSqliteStore({ path: join(dirname(storePath), 'approval-notifications.db'), ...bounds })
  const { createDeliverer } = await import('../webhooks/deliverer.js')
  const { noInboxObserver } = await import('../webhooks/inbox-metrics.js')
  const deliverer = createDeliverer({
    settings: { deliverTo: notifyUrl, signingSecrets: [signingSecret], deliveryTimeoutS: DEFAULT_WEBHOOK_DELIVERY_TIMEOUT_S, concurrency: CONCURRENCY, retryScheduleMs, retentionS: RETENTION_S },
    store,
    log: deps.log,
    clock: deps.clock,
    observer: noInboxObserver,
  })
  return {
    async notify (type, approval) {
      const body = Buffer.from(JSON.stringify({ type, approval }))
      const outcome = await store.intake({
        key: `${type}:${approval.id}`,
        bodySha256: createHash('sha256').update(body).digest('hex'),
        // One approval's notifications go in the order they were made.
        orderKey: approval.id,
        body,
        headers: [['content-type', 'application/json']],
        source: 'approvals',
        receivedAtMs: deps.clock.wallMs(),
      })
      if (outcome.kind === 'duplicate') return false
      deps.log.info({ approval: approval.id, caller: approval.caller, type, notification: outcome.id }, 'approval notification stored')
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
