/**
 * The typed, frozen configuration every other module receives. Nothing outside `load-config.ts`
 * looks at raw variables.
 */
import type { ConsoleConfig } from './console-settings.js'
import type { Cidr } from './network-lists.js'
import type { PaymentsConfig } from './payment-config.js'
import type { RawSettings } from './schema.js'
import type { WebhookConfig } from './webhook-config.js'
import type { DuplicatesConfig } from './duplicate-settings.js'
import type { OAuthConfig } from './oauth-settings.js'

export const ENVIRONMENTS = ['production', 'sandbox'] as const
export type EnvironmentName = typeof ENVIRONMENTS[number]
export const INTERFACES = ['fiat', 'crypto'] as const
export type InterfaceName = typeof INTERFACES[number]

export interface Credentials { apiKey: string, publicKey: string }

export interface EnvironmentConfig {
  name: EnvironmentName
  credentials: Credentials
  /** Base URL per interface, without trailing slash; crypto is absent when not configured. */
  baseUrls: Readonly<Partial<Record<InterfaceName, string>>>
  /** `POST {fiat base}/auth/generate-bearer-token` */
  tokenUrl: string
}

export interface Config {
  environments: Readonly<Partial<Record<EnvironmentName, EnvironmentConfig>>>
  /** Base URLs of both environments, also those without credentials (routing answers 404 for them). */
  baseUrls: Readonly<Record<EnvironmentName, Readonly<Partial<Record<InterfaceName, string>>>>>
  defaultEnvironment: EnvironmentName | null
  listen: { host: string, port: number }
  token: {
    refreshMarginS: number
    timeoutS: number
    maxLifetimeS: number
    retryMinS: number
    retryMaxS: number
  }
  upstream: { timeoutS: number, connections: number, ipFamily: 'ipv4' | 'any' }
  access: { allowedClients: readonly Cidr[], allowedHosts: readonly string[] }
  bodyLimitBytes: number
  egress: { url: string | null, intervalS: number, expectedIps: readonly string[] }
  shutdownGraceS: number
  logLevel: string
  /** SPEC §7: absent means every allowed client is one anonymous caller. */
  callers: { file: string | null }
  /** SPEC §8. `keyPointer` is an RFC 6901 JSON Pointer, also used to judge whether a 401 retry is safe. */
  idempotency: { enabled: boolean, keyPointer: string, ttlS: number }
  /** SPEC §3: whether a segment may hold dots (`USDC.e`), never at its start or end. */
  paths: { allowDots: boolean }
  /** SPEC §9: `redisUrl` null means the in-memory store. The URL may hold a password: never log it. */
  state: { redisUrl: string | null, keyPrefix: string }
  /** SPEC §10: null when `PROXY_WEBHOOK_LISTEN` is not set (the inbox is off). */
  webhooks: WebhookConfig | null
  /**
   * SPEC §11. `sealingSecret` (a `whsec_` secret, never logged) keys the seals of approval records,
   * `signingSecret` the notifications; whether approvals are used at all is known only once the
   * callers file is read (server.ts).
   */
  approvals: {
    ttlS: number
    signingSecret: string | null
    sealingSecret: string | null
    storePath: string
    /** Where notifications are delivered (null: none), on the inbox's retry schedule. */
    notifyUrl: string | null
    retryScheduleMs: readonly number[]
  }
  /** SPEC §14: null when `PROXY_CONSOLE_LISTEN` is not set (the console is off). */
  console: ConsoleConfig | null
  /** SPEC §13: `/mcp` on the proxy listener; `toolsFile` holds the operator's tools (null: built-in tools only). */
  mcp: { enabled: boolean, toolsFile: string | null }
  /** SPEC §15: how `/mcp` takes OAuth access tokens; null when OAuth is off. */
  oauth: OAuthConfig | null
  /** SPEC §12: null unless `PROXY_PAYMENTS=on`. */
  payments: PaymentsConfig | null
  /** SPEC §16: the probable-duplicate check; null unless payments are followed and the window is not 0. */
  duplicates: DuplicatesConfig | null
  /** `*_FILE` paths in use, so a change can trigger a credential reload. */
  secretFiles: readonly string[]
}

export const TOKEN_PATH = '/auth/generate-bearer-token'

/** What loading the configuration gives (load-config.ts). */
export interface LoadedConfig {
  config: Config
  warnings: string[]
  /** The variables as the schema read them (defaults applied): what a reload compares, never logged. */
  settings: Readonly<RawSettings>
}
