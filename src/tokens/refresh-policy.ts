/**
 * When to refresh and when to retry, as pure functions of monotonic times (ms) and a random
 * number in [0, 1), so the schedule is tested without waiting.
 */
import type { TokenGrant } from './token-grant.js'

export interface RefreshSettings {
  refreshMarginMs: number
  retryMinMs: number
  retryMaxMs: number
}

/**
 * The last stretch of a token's life in which it is no longer handed out, so a request that
 * takes it just before this point still reaches the provider before `expiresAt`.
 */
export function safetyWindowMs (grant: TokenGrant): number {
  const lifetimeMs = grant.expiresAtMs - grant.obtainedAtMs
  return Math.min(2_000, lifetimeMs * 0.05)
}

export function unusableAtMs (grant: TokenGrant): number {
  return grant.expiresAtMs - safetyWindowMs(grant)
}

/**
 * Refresh `margin` before expiry, but never in the first half of a short-lived token's life (a
 * 5-minute margin on a 10-second token would refresh in a loop), and never so late that the token
 * stops being handed out first (a margin of 0 would make every request wait for the refresh): at
 * least a safety window of time is left for the refresh round trip. Up to a quarter of the margin
 * (at most a minute) of jitter moves the refresh earlier, never later, so a fleet of sidecars
 * started together does not hit the token endpoint in step.
 */
export function refreshAtMs (grant: TokenGrant, settings: RefreshSettings, random: number): number {
  const lifetimeMs = grant.expiresAtMs - grant.obtainedAtMs
  const marginMs = Math.min(Math.max(settings.refreshMarginMs, 2 * safetyWindowMs(grant)), lifetimeMs / 2)
  const jitterMs = random * Math.min(marginMs / 4, 60_000)
  return grant.expiresAtMs - marginMs - jitterMs
}

/**
 * When to ask again after the provider handed back the token already held ("generates or
 * retrieves", SPEC §1). That is an answer, not a failure, so the backoff does not grow: the next
 * request goes half-way (jittered earlier by up to a quarter) to the point the token stops being
 * handed out, at least `retryMin` later, and never after that point, so the switch to a new token
 * is tried while the old one still serves and costs a handful of requests per token life.
 */
export function retrieveAgainInMs (
  grant: TokenGrant,
  settings: RefreshSettings,
  random: number,
  nowMs: number,
): number {
  const leftMs = Math.max(0, unusableAtMs(grant) - nowMs)
  const halfwayMs = (leftMs / 2) * (1 - random / 4)
  return Math.min(leftMs, Math.max(settings.retryMinMs, halfwayMs))
}

/**
 * Backoff after a failed token request, as a function of how long the endpoint has been failing:
 * each wait is drawn from [T, 2T] for a failure that has lasted T (at least [min/2, min], at most
 * [max/2, max]), so waits grow exponentially with jitter while the outage lasts, and a short
 * outage is followed by a short wait however many times it was probed. While a token is still in
 * use, a step never exceeds half the time it has left, so retries keep landing before expiry
 * instead of one long sleep overshooting it; but never falls below half of `retryMin` either, the
 * spacing an operator chose for a failing endpoint.
 */
export function retryDelayMs (
  failingForMs: number,
  settings: RefreshSettings,
  random: number,
  nowMs: number,
  grant: TokenGrant | null,
): number {
  const ceiling = Math.min(settings.retryMaxMs, Math.max(settings.retryMinMs, 2 * failingForMs))
  let delay = ceiling / 2 + (ceiling / 2) * random
  if (grant !== null) {
    const leftMs = unusableAtMs(grant) - nowMs
    if (leftMs > 0) delay = Math.min(delay, Math.max(leftMs / 2, settings.retryMinMs / 2))
  }
  return delay
}
