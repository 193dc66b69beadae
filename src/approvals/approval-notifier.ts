/**
 * Notifications of approvals (SPEC §11) to PROXY_APPROVAL_NOTIFY_URL: `approval.requested`, then
 * `approval.approved`, `.rejected` or `.expired`, each stored and delivered by a notification outbox
 * of its own (outbox/notification-outbox.ts: its own file or Redis prefix, URL and secret), so they
 * are signed the Standard Webhooks way and retried on §10's schedule across restarts. Signed with
 * PROXY_APPROVAL_SIGNING_SECRET, never the inbox's secret: whoever receives notifications cannot
 * forge payment events to the application. A notification's key is its type and approval id, so
 * telling the outbox twice (the worker looks until a decision is settled) delivers it once.
 */
import { dirname, join } from 'node:path'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import type { Clock } from '../clock.js'
import type { Config } from '../config/config.js'
import { METRIC_PREFIX } from '../ops/metrics.js'
import { workerPasses } from '../ops/worker-passes.js'
import type { Storage } from '../storage/storage.js'
import type { ApprovalView } from '../objects/approval-object.js'

export type NotificationType = 'approval.requested' | 'approval.approved' | 'approval.rejected' | 'approval.expired'

export interface ApprovalNotifier {
  /** Resolves true when the notification was newly stored (false: it was already). */
  notify: (type: NotificationType, approval: ApprovalView) => Promise<boolean>
  start: () => void
  stop: () => Promise<void>
}

/** Null without PROXY_APPROVAL_NOTIFY_URL. The outbox's modules are loaded only here, only then. */
export async function openApprovalNotifier (config: Pick<Config, 'approvals'>, deps: { log: Logger, clock: Clock, registry: Registry, storage: Storage }): Promise<ApprovalNotifier | null> {
  const { notifyUrl, signingSecret, retryScheduleMs, storePath } = config.approvals
  if (notifyUrl === null || signingSecret === null) return null
  const [{ openNotificationOutbox }, { deriveNotificationSealKey }, { noDeliveryObserver }] = await Promise.all([import('../outbox/notification-outbox.js'), import('../outbox/notification-seal.js'), import('../outbox/deliverer.js')])
  const redis = await deps.storage.redis()
  const outbox = await openNotificationOutbox({
    name: 'approvals',
    url: notifyUrl,
    signingSecrets: [signingSecret],
    retryScheduleMs,
    // Its own file beside the approvals', or its own key prefix: the inbox's events stay the inbox's.
    store: redis !== null ? { redis, keys: 'aprn:' } : { path: join(dirname(storePath), 'approval-notifications.db') },
    log: deps.log,
    clock: deps.clock,
    observer: { ...noDeliveryObserver, pass: workerPasses(deps.registry, METRIC_PREFIX, 'approval_notifications') },
    sealKey: config.approvals.sealingSecret === null
      ? undefined
      : deriveNotificationSealKey(config.approvals.sealingSecret),
  })
  return {
    async notify (type, approval) {
      // One approval's notifications go in the order they were made.
      const { id, stored } = await outbox.notify(type, approval.id, approval.id, { approval })
      if (stored) deps.log.info({ approval: approval.id, caller: approval.caller, type, notification: id }, 'approval notification stored')
      return stored
    },
    start: outbox.start,
    stop: outbox.stop,
  }
}
