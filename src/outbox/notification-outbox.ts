/**
 * A notification outbox: events the sidecar itself sends to one URL (SPEC §11's approval
 * notifications; §12's payment notifications), each with an outbox store and a deliverer of its own
 * (its own SQLite file or Redis key prefix, URL and secret), so they are signed the Standard Webhooks
 * way and retried on a schedule across restarts, like the inbox's events. A notification's key is its
 * type and its subject's key, so telling the outbox twice (a worker that looks again until its step
 * is settled) delivers it once; notifications sharing an order key go in the order they were made.
 *
 * A user adds a few lines: open one with its URL, secret and store, `start` it, `notify`, `stop` it.
 */
import { createHash } from 'node:crypto'
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import { DEFAULT_WEBHOOK_DELIVERY_TIMEOUT_S, DEFAULT_WEBHOOK_ORDER_MAX_WAIT_S, DEFAULT_WEBHOOK_STORE_MAX_BYTES, DEFAULT_WEBHOOK_STORE_MAX_EVENTS } from '../config/schema.js'
import { createDeliverer, noDeliveryObserver, type DeliveryObserver } from './deliverer.js'
import { openStoreFile } from '../sqlite/store-file-error.js'
import { openOutboxStore } from './open-outbox-store.js'
import { sealNotification, vetNotification } from './notification-seal.js'
import type { SealKey } from '../sealing/seal-mac.js'
import type { RedisConnection } from '../storage/redis-connection.js'

/** Delivered and failed notifications are kept this long (listed, and not sent twice) unless told otherwise. */
const DEFAULT_RETENTION_S = 7 * 86400
const CONCURRENCY = 4

export interface NotificationOutboxOptions {
  /** Names the outbox in its log lines (`approvals`), and is each notification's source. */
  name: string
  /** The receiver's `http(s)` URL. */
  url: string
  /** `whsec_…` secrets that sign every delivery: the current one first. Never the inbox's. */
  signingSecrets: readonly string[]
  /** Waits after each failed attempt, in milliseconds. */
  retryScheduleMs: readonly number[]
  /** How long delivered and failed notifications are kept, in seconds; 7 days by default. */
  retentionS?: number
  /** Its own keys in Redis (with PROXY_REDIS_URL: `keys` after the connection's prefix), else its own SQLite file. */
  store: { redis: RedisConnection, keys: string } | { path: string }
  log: Logger
  clock: Clock
  /** Metrics of its deliveries; none by default. */
  observer?: DeliveryObserver
  /**
   * Seals each notification as it is stored (its key and body), and sends none whose seal does not
   * verify: write access to the outbox is not the power to tell the receiver anything. Absent: unsealed.
   */
  sealKey?: SealKey | undefined
}

export interface NotificationOutbox {
  /**
   * Stores `{"type": <type>, ...payload}` (JSON) for delivery, once it is durable. Its key is
   * `<type>:<key>`: `stored` is false when that notification was already stored (nothing is sent again).
   * Rejects (WebhookStoreUnavailableError) while the store cannot take it (Redis connecting or down,
   * a full store, a disk error): the caller tells it again later, as the approvals worker does.
   */
  notify: (
    type: string,
    key: string,
    orderKey: string | null,
    payload: Readonly<Record<string, unknown>>,
  ) => Promise<{ id: string, stored: boolean }>
  start: () => void
  stop: () => Promise<void>
}

export async function openNotificationOutbox (options: NotificationOutboxOptions): Promise<NotificationOutbox> {
  const { log, clock } = options
  const retentionS = options.retentionS ?? DEFAULT_RETENTION_S
  const bounds = {
    retentionMs: retentionS * 1000,
    maxEvents: DEFAULT_WEBHOOK_STORE_MAX_EVENTS,
    maxBytes: DEFAULT_WEBHOOK_STORE_MAX_BYTES,
    orderMaxWaitMs: DEFAULT_WEBHOOK_ORDER_MAX_WAIT_S * 1000,
  }
  const location = options.store
  const store = 'path' in location
    ? await openStoreFile(`${options.name} notifications`, `${location.path} (beside PROXY_WEBHOOK_STORE_PATH)`, async () => await openOutboxStore({ ...location, log }, bounds))
    : await openOutboxStore({ ...location, log }, bounds)
  const deliverer = createDeliverer({
    settings: {
      deliverTo: options.url,
      signingSecrets: options.signingSecrets,
      deliveryTimeoutS: DEFAULT_WEBHOOK_DELIVERY_TIMEOUT_S,
      concurrency: CONCURRENCY,
      retryScheduleMs: options.retryScheduleMs,
      retentionS,
    },
    store,
    log,
    clock,
    observer: options.observer ?? noDeliveryObserver,
    vet: options.sealKey === undefined ? undefined : vetNotification(options.sealKey),
  })
  return {
    async notify (type, key, orderKey, payload) {
      const body = Buffer.from(JSON.stringify({ type, ...payload }))
      const storedKey = `${type}:${key}`
      const headers: Array<[string, string]> = [['content-type', 'application/json']]
      if (options.sealKey !== undefined) headers.push(sealNotification(options.sealKey, storedKey, body))
      const outcome = await store.intake({
        key: storedKey,
        bodySha256: createHash('sha256').update(body).digest('hex'),
        orderKey,
        body,
        headers,
        source: options.name,
        receivedAtMs: clock.wallMs(),
      })
      if (outcome.kind === 'duplicate') return { id: outcome.id, stored: false }
      if (outcome.evicted !== undefined) {
        log.warn({ outbox: options.name, evicted: outcome.evicted }, 'notification outbox full: delivered notifications removed before their retention to make room')
      }
      deliverer.wake()
      return { id: outcome.id, stored: true }
    },
    start: () => { deliverer.start() },
    async stop () {
      await deliverer.stop()
      await store.close()
    },
  }
}
