/**
 * The typed settings of payments followed to their final state (SPEC §12), part of Config when
 * `PROXY_PAYMENTS=on`. The signing secrets are held as read: never logged.
 */
export interface PaymentsConfig {
  /** PROXY_PAYMENTS_PATHS: §7 path globs a followed POST must match. */
  paths: readonly string[]
  transactionIdPointer: string
  statusPointer: string
  /** Lower case: provider statuses are compared without letter case. */
  succeededStatuses: readonly string[]
  failedStatuses: readonly string[]
  amountPointer: string
  currencyPointer: string
  eventTransactionIdPointer: string
  eventReferencePointer: string
  /** `lookup`: a final event settles once a look-up agrees (where the interface has a look-up path). */
  confirm: 'lookup' | 'event'
  /**
   * Per interface, below its base, with `{transactionId}` or `{externalReference}`; null: no look-ups (events alone
   * settle).
   */
  lookupPaths: Readonly<{ fiat: string | null, crypto: string | null }>
  /** Look-up times counted from a payment's creation (or its recheck), in milliseconds. */
  lookupScheduleMs: readonly number[]
  lookupConcurrency: number
  lookupsPerSecond: number
  /** PROXY_PAYMENTS_NOTIFY_URL, else PROXY_WEBHOOK_DELIVER_TO. */
  notifyUrl: string
  /** `whsec_…`: PROXY_WEBHOOK_SIGNING_SECRET first, then its _PREVIOUS during a rotation. */
  signingSecrets: readonly string[]
  /** SPEC §12 "Sealed": keys the seals of payment records (a `whsec_` secret, never logged). */
  sealingSecret: string
  /** §10's PROXY_WEBHOOK_RETRY_SCHEDULE, for notifications. */
  retryScheduleMs: readonly number[]
  retentionS: number
  /** §10's embedded store (PROXY_WEBHOOK_STORE_PATH), whether or not the inbox is on. */
  storePath: string
}
