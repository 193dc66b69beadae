/**
 * One environment's token: fetched at start, refreshed in the background before expiry, retried
 * with bounded backoff, replaced after an upstream 401. States (STYLE "Token source"):
 * - fresh: handed out as is;
 * - refresh due: handed out while one background refresh runs;
 * - unusable (none, or inside the safety window): callers wait for the single in-flight request,
 *   at most TOKEN_WAIT_MS, or get TOKEN_UNAVAILABLE at once while the token endpoint is failing.
 * At most one token request is in flight, however many callers wait.
 */
import type { Logger } from 'pino'
import type { Clock, TimerHandle } from '../clock.js'
import type { EnvironmentConfig, EnvironmentName } from '../config/config.js'
import { TokenUnavailableError } from '../errors.js'
import { refreshAtMs, retrieveAgainInMs, retryDelayMs, unusableAtMs, type RefreshSettings } from './refresh-policy.js'
import { TokenRequestError, type TokenFailureReason, type TokenGrant } from './token-grant.js'
import type { FetchToken } from './token-client.js'

/**
 * Forced refreshes in a row not vindicated by a retry (a request rejected with the old token that
 * succeeded with the new one), before further ones are spaced out by
 * FORCED_REFRESH_MIN_INTERVAL_MS: an upstream that answers 401 for reasons other than the token,
 * or a token endpoint that hands back the token just rejected, cannot turn every request into a
 * token request. A revoked token is still replaced at once, however soon after the last one.
 */
export const UNCONFIRMED_FORCED_REFRESHES = 2
export const FORCED_REFRESH_MIN_INTERVAL_MS = 30_000

/**
 * How long a request without a usable token waits for the token request in flight before its 503
 * (BAD_INPUTS: a token endpoint hanging at start gives "a fast 503"): long enough for a provider
 * that answers normally, far shorter than PROXY_TOKEN_TIMEOUT_SECONDS. The token request itself
 * runs on to its own timeout.
 */
export const TOKEN_WAIT_MS = 1_000

export interface TokenObserver {
  refreshed?(environment: EnvironmentName, outcome: 'success' | 'unchanged' | 'failure', reason?: TokenFailureReason): void
  requestStarted?(environment: EnvironmentName): void
  requestEnded?(environment: EnvironmentName): void
  waited?(environment: EnvironmentName, ms: number): void
}

export interface TokenSourceOptions {
  environment: EnvironmentConfig
  fetchToken: FetchToken
  clock: Clock
  log: Logger
  settings: RefreshSettings
  random?: () => number
  observer?: TokenObserver
}

export interface TokenStatus { ready: boolean, expiresAt: number | null }

export class TokenSource {
  readonly name: EnvironmentName
  #environment: EnvironmentConfig
  readonly #fetchToken: FetchToken
  readonly #clock: Clock
  readonly #log: Logger
  readonly #settings: RefreshSettings
  readonly #random: () => number
  readonly #observer: TokenObserver
  #grant: TokenGrant | null = null
  #inflight: Promise<TokenGrant> | null = null
  #abort: AbortController | null = null
  #timer: TimerHandle | null = null
  #failures = 0
  /** Monotonic ms of the first failure of the current run of failures; null when none. */
  #failingSinceMs: number | null = null
  /** Monotonic ms of the next scheduled attempt while backing off; null when not backing off. */
  #retryAtMs: number | null = null
  #refreshDueAtMs = Infinity
  #lastForcedMs = -Infinity
  #unconfirmedForced = 0
  /** The different token the last forced refresh brought, until a retry with it succeeds. */
  #replacement: string | null = null
  #lastError: TokenRequestError | null = null
  #closed = false

  constructor (options: TokenSourceOptions) {
    this.name = options.environment.name
    this.#environment = options.environment
    this.#fetchToken = options.fetchToken
    this.#clock = options.clock
    this.#log = options.log.child({ environment: this.name })
    this.#settings = options.settings
    this.#random = options.random ?? Math.random
    this.#observer = options.observer ?? {}
  }

  /** Starts the first token request without waiting for it: start-up never blocks on the provider. */
  start (): void {
    this.#refresh().catch(() => {})
  }

  /**
   * A token that may be sent now. Without one, waits for the token request in flight (or starts
   * it), at most TOKEN_WAIT_MS; while the endpoint is failing (backing off, or a retry in flight
   * after a failure) there is nothing worth waiting for, and the 503 comes at once.
   */
  async get (): Promise<string> {
    const token = this.current()
    if (token !== null) return token
    const now = this.#clock.monotonicMs()
    if (this.#failingSinceMs !== null && !this.#closed) {
      throw new TokenUnavailableError(this.name, this.#retryAfterSeconds(now), this.#lastError ?? undefined)
    }
    const started = now
    try {
      const fresh = await this.#waitAtMost(this.#inflight ?? this.#refresh(), TOKEN_WAIT_MS)
      return fresh.token
    } catch (err) {
      throw new TokenUnavailableError(this.name, this.#retryAfterSeconds(this.#clock.monotonicMs()), err)
    } finally {
      this.#observer.waited?.(this.name, this.#clock.monotonicMs() - started)
    }
  }

  /**
   * The token if one can be sent now (starting the background refresh when it is due), else null:
   * the synchronous fast path of get(), taken by nearly every request.
   */
  current (): string | null {
    const now = this.#clock.monotonicMs()
    const grant = this.#usable(now)
    if (grant === null) return null
    if (now >= this.#refreshDueAtMs &&
      this.#inflight === null &&
      this.#retryAtMs === null) this.#refresh().catch(() => {})
    return grant.token
  }

  /** The token if it can be sent right now, without waiting and without side effects. */
  peek (): string | null {
    return this.#usable(this.#clock.monotonicMs())?.token ?? null
  }

  /** A request rejected with 401 was retried with `token` and answered otherwise. */
  retrySucceeded (token: string): void {
    if (token === this.#replacement) {
      this.#unconfirmedForced = 0
      this.#replacement = null
    }
  }

  /**
   * An upstream answered 401 to `token` (SPEC §5: replaced at most once per token, single-flight).
   * Drops it only if it is still the current one (a concurrent 401 may already have replaced it)
   * and forces one refresh. Once forced refreshes stop being vindicated by retries, they are
   * spaced out (UNCONFIRMED_FORCED_REFRESHES).
   * Resolves true when a different token is now available to retry with.
   */
  async replaceRejected (token: string): Promise<boolean> {
    const now = this.#clock.monotonicMs()
    if (this.#grant?.token === token) {
      if (this.#unconfirmedForced >= UNCONFIRMED_FORCED_REFRESHES &&
        now - this.#lastForcedMs < FORCED_REFRESH_MIN_INTERVAL_MS) return false
      this.#lastForcedMs = now
      this.#unconfirmedForced++
      this.#log.warn('upstream rejected the token; requesting a new one')
      this.#grant = null
      this.#refreshDueAtMs = Infinity
      // Even while backing off after failed refreshes: the rejected token is gone, so ask now.
      this.#refresh().then((grant) => { if (grant.token !== token) this.#replacement = grant.token }, () => {})
    }
    // The caller retries with the replacement, so it waits for it, even while refreshes back off.
    const usable = this.current()
    if (usable !== null) return usable !== token
    if (this.#inflight === null) return false
    try {
      return (await this.#inflight).token !== token
    } catch {
      return false
    }
  }

  status (): TokenStatus {
    const grant = this.#usable(this.#clock.monotonicMs())
    return { ready: grant !== null, expiresAt: grant?.expiresAt ?? null }
  }

  /** The grant in use (for `check` and metrics); never log its token. */
  currentGrant (): TokenGrant | null {
    return this.#usable(this.#clock.monotonicMs())
  }

  /**
   * New credentials (rotation), already proven by `grant`, a token they obtained: the old set's
   * token is dropped only now, so a rejected key never costs the working token (SPEC §5).
   */
  replaceEnvironment (environment: EnvironmentConfig, grant: TokenGrant): void {
    this.#environment = environment
    this.#abort?.abort()
    this.#grant = null
    this.#failures = 0
    this.#failingSinceMs = null
    this.#retryAtMs = null
    this.#refreshDueAtMs = Infinity
    this.#lastForcedMs = -Infinity
    this.#unconfirmedForced = 0
    this.#replacement = null
    this.#inflight = null
    this.#accept(grant, environment)
  }

  close (): void {
    this.#closed = true
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer)
    this.#timer = null
    this.#abort?.abort()
  }

  #usable (now: number): TokenGrant | null {
    const grant = this.#grant
    return grant !== null && now < unusableAtMs(grant) ? grant : null
  }

  #waitAtMost (request: Promise<TokenGrant>, ms: number): Promise<TokenGrant> {
    return new Promise((resolve, reject) => {
      const timer = this.#clock.setTimeout(() => {
        reject(new Error(`the token request in flight did not answer within ${ms} ms`))
      }, ms)
      request.then((grant) => {
        this.#clock.clearTimeout(timer)
        resolve(grant)
      }, (err: Error) => {
        this.#clock.clearTimeout(timer)
        reject(err)
      })
    })
  }

  #retryAfterSeconds (now: number): number {
    const waitMs = this.#retryAtMs === null ? 1000 : this.#retryAtMs - now
    return Math.max(1, Math.ceil(waitMs / 1000))
  }

  #refresh (): Promise<TokenGrant> {
    if (this.#inflight !== null) return this.#inflight
    if (this.#closed) return Promise.reject(new Error('token source closed'))
    this.#cancelTimer()
    this.#retryAtMs = null
    const abort = new AbortController()
    this.#abort = abort
    const environment = this.#environment
    this.#observer.requestStarted?.(this.name)
    const inflight = this.#fetchToken(environment, abort.signal).then(
      (grant) => this.#accept(grant, environment),
      (err: unknown) => this.#reject(err, environment),
    ).finally(() => {
      this.#observer.requestEnded?.(this.name)
      if (this.#inflight === inflight) this.#inflight = null
    })
    this.#inflight = inflight
    return inflight
  }

  #accept (grant: TokenGrant, environment: EnvironmentConfig): TokenGrant {
    if (environment !== this.#environment || this.#closed) throw new Error('token request superseded')
    const now = this.#clock.monotonicMs()
    const previous = this.#grant
    // "generates or retrieves": an early refresh may hand back the token we hold. Keep it, with the
    // deadline we already computed, and ask again later instead of at once (no loop). The endpoint
    // answered, so this is no failure: the backoff is reset rather than grown.
    if (previous !== null && previous.token === grant.token && now < unusableAtMs(previous)) {
      this.#failures = 0
      this.#failingSinceMs = null
      this.#lastError = null
      const againInMs = retrieveAgainInMs(previous, this.#settings, this.#random(), now)
      this.#refreshDueAtMs = now + againInMs
      this.#schedule(againInMs)
      this.#observer.refreshed?.(this.name, 'unchanged')
      this.#log.debug({ expiresAt: previous.expiresAt, askAgainInSeconds: Math.round(againInMs / 100) / 10 }, 'token endpoint returned the token already held')
      return previous
    }
    this.#grant = grant
    this.#failures = 0
    this.#failingSinceMs = null
    this.#lastError = null
    this.#refreshDueAtMs = refreshAtMs(grant, this.#settings, this.#random())
    this.#schedule(this.#refreshDueAtMs - now)
    this.#observer.refreshed?.(this.name, 'success')
    this.#log.info({ expiresAt: grant.expiresAt, lifetimeSeconds: grant.lifetimeS, refreshInSeconds: Math.round((this.#refreshDueAtMs - now) / 1000) }, 'token obtained')
    return grant
  }

  #reject (err: unknown, environment: EnvironmentConfig): never {
    if (environment !== this.#environment || this.#closed) throw err
    const error = err instanceof TokenRequestError
      ? err
      : new TokenRequestError('network', 'token request failed', {}, err)
    this.#lastError = error
    this.#observer.refreshed?.(this.name, 'failure', error.reason)
    const retryInMs = this.#scheduleRetry(this.#clock.monotonicMs())
    this.#log.warn({ reason: error.reason, ...error.details, err: error, attempt: this.#failures, retryInSeconds: Math.round(retryInMs / 100) / 10, holdingValidToken: this.peek() !== null }, 'token refresh failed')
    throw error
  }

  #scheduleRetry (now: number): number {
    this.#failingSinceMs ??= now
    const delay = retryDelayMs(now - this.#failingSinceMs, this.#settings, this.#random(), now, this.#usable(now))
    this.#failures++
    this.#retryAtMs = now + delay
    this.#schedule(delay)
    return delay
  }

  #schedule (delayMs: number): void {
    this.#cancelTimer()
    if (this.#closed) return
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = null
      this.#refresh().catch(() => {})
    }, Math.max(0, delayMs))
  }

  #cancelTimer (): void {
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer)
    this.#timer = null
  }
}
