/**
 * The fake provider's public types, kept apart from the implementation so the internal modules can
 * share them without importing each other in a circle.
 */

import type http from 'node:http'

export type ProviderEnvironment = 'production' | 'sandbox'
export type ProviderInterface = 'fiat' | 'crypto'

export interface ProviderCredentials { apiKey: string, publicKey: string }

export interface FakeProviderOptions {
  /** Listen address of all three servers; default '127.0.0.1'. */
  host?: string
  /** Ports default to 0 (ephemeral). */
  fiatPort?: number
  cryptoPort?: number
  ipEchoPort?: number
  /** Default DEMO_CREDENTIALS. */
  credentials?: Record<ProviderEnvironment, ProviderCredentials>
  /** Default 7200. */
  tokenLifetimeSeconds?: number
  /** Provider wall clock in ms; default Date.now. Tests pass a fake or a skewed clock. */
  now?: () => number
  /** What the IP echo answers; default '203.0.113.7'. */
  egressIp?: string
  /** Host put in the URLs handed out; default = host (set it when listening on 0.0.0.0). */
  advertisedHost?: string
  /** Payouts answered pending with a transaction id, look-ups, statuses that settle on their own; off by default. */
  transactions?: TransactionOptions
}

export interface TokenRequestRecord {
  environment: ProviderEnvironment | null
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
  /** Provider clock, ms. */
  at: number
}

export interface UpstreamRequestRecord {
  server: ProviderInterface
  /** null for a request outside every base path (answered 404). */
  environment: ProviderEnvironment | null
  method: string
  /** Raw request target as received. */
  url: string
  headers: http.IncomingHttpHeaders
  body: Buffer
  tokenValid: boolean
}

/** Fault injection: return true when the request was answered, false to fall through to the normal behaviour. */
export type TokenHandler = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: string,
) => boolean | Promise<boolean>
export type UpstreamHandler = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: Buffer,
) => boolean | Promise<boolean>

export interface FakeProvider {
  /** e.g. http://127.0.0.1:PORT */
  fiatOrigin: string
  cryptoOrigin: string
  /** e.g. http://127.0.0.1:PORT/ip */
  ipEchoUrl: string
  /** `${fiatOrigin}/api/b2b` */
  fiatBaseUrl: string
  /** `${cryptoOrigin}/api` */
  cryptoBaseUrl: string
  /** `${fiatOrigin}/api/sandbox/b2b` */
  fiatSandboxBaseUrl: string
  /** `${cryptoOrigin}/api/sandbox` */
  cryptoSandboxBaseUrl: string
  tokenRequests: TokenRequestRecord[]
  upstreamRequests: UpstreamRequestRecord[]
  readonly ipEchoRequests: number
  /** Every token ever issued (kept across reset()), for secret-leak scans. */
  issuedTokens: string[]
  setEgressIp(ip: string): void
  /** The dashboard's key rotation: from now on only this pair obtains tokens (issued tokens stay valid). */
  setCredentials(environment: ProviderEnvironment, credentials: ProviderCredentials): void
  /** When on, authenticated production fiat requests get 403 IP_NOT_ALLOWED. */
  setIpAllowlistEnforced(on: boolean): void
  /**
   * Applies to tokens issued from now on; the cached token is dropped so the next token request gets the new lifetime.
   */
  setTokenLifetime(seconds: number): void
  /** Tokens issued before this call are answered with 401 by the upstreams. */
  revokeAllTokens(): void
  /** Replaces the token endpoint's behaviour; null restores. */
  setTokenHandler(fn: TokenHandler | null): void
  /** Same for the fiat/crypto API endpoints (not the token endpoint). */
  setUpstreamHandler(fn: UpstreamHandler | null): void
  /** Payouts and look-ups (SPEC §12); `configure(null)` turns them off (the echo answers again). */
  transactions: Transactions
  /** Clears the request records and restores handlers and settings to the construction defaults. */
  reset(): void
  /** Closes all three servers, destroying open sockets so tests never hang. */
  close(): Promise<void>
}

/** Payouts and look-ups of the fake provider (transactions.ts; SPEC §12). */
export interface TransactionOptions {
  /** When a pending transaction turns final on its own; default 3 s. */
  settleAfterMs?: number
  /** The status it turns to; default `successful`. */
  finalStatus?: string
  /** Where status changes are sent (the sidecar's inbox), with the dashboard's static secret. */
  webhook?: { url: string, secret: string } | null
}

export interface FakeTransaction {
  transactionId: string
  environment: ProviderEnvironment
  interface: ProviderInterface
  externalReference: string
  amount: unknown
  currency: unknown
  status: string
  createdAtMs: number
}

export interface Transactions {
  readonly enabled: boolean
  configure: (options: TransactionOptions | null) => void
  /** Handles a payout or a look-up; false for anything else (the echo answers it). */
  handle: (
    server: ProviderInterface,
    environment: ProviderEnvironment,
    method: string,
    path: string,
    body: Buffer,
    res: http.ServerResponse,
  ) => boolean
  list: () => FakeTransaction[]
  /** Sets a status now (and sends the webhook, when set). */
  setStatus: (transactionId: string, status: string) => void
  /** Look-ups answered, per transaction id. */
  lookups: Map<string, number>
  /** Sends an event as the provider would (or as a forger would). */
  sendEvent: (body: unknown) => Promise<number>
  close: () => void
}
