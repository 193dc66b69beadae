/**
 * The webhook inbox's typed settings (SPEC §10), part of Config when `PROXY_WEBHOOK_LISTEN` is set.
 * Secrets (path tokens, the verification secret, the signing secrets) are held as read: never logged.
 */
import type { Cidr } from './network-lists.js'

export type ProviderVerification =
  | { scheme: 'header-secret', header: string, secret: string }
  | { scheme: 'hmac', header: string, secret: string, algorithm: 'sha256' | 'sha512', encoding: 'hex' | 'base64', prefix: string }

export interface WebhookConfig {
  listen: { host: string, port: number }
  /** The current path token first, then the previous one during a change of registration. */
  pathTokens: readonly string[]
  allowedSources: readonly Cidr[]
  trustedProxies: readonly Cidr[]
  /** null: no provider signature is checked. */
  verify: ProviderVerification | null
  /**
   * Lower case. The header a provider's signature (its secret) arrives in: never stored or passed on, verified or not.
   */
  verificationHeader: string
  bodyLimitBytes: number
  eventIdPointer: string | null
  /** Lower case. */
  eventIdHeader: string | null
  retentionS: number
  deliverTo: string
  /** `whsec_…` secrets: the current one first, then the previous one during a rotation. */
  signingSecrets: readonly string[]
  deliveryTimeoutS: number
  /** Waits after each failed attempt, in milliseconds: its length + 1 is the number of attempts. */
  retryScheduleMs: readonly number[]
  orderKeyPointer: string | null
  /** How long a later event waits behind an earlier one of its order key before it is delivered out of order. */
  orderMaxWaitS: number
  concurrency: number
  /** Events a second taken while the proxy is busy (webhooks/intake-pacing.ts); 0: never paced. */
  rateWhileProxying: number
  storePath: string
  storeMaxEvents: number
  storeMaxBytes: number
}
