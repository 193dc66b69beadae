/**
 * The inbox yields to the proxy (SPEC §10 as this sidecar runs it, docs/webhooks.md "While the proxy
 * is busy"): while the proxy has forwarded a request within the last `busyWindowMs`, new events are
 * taken at most `ratePerS` a second, after a burst of `burst`. An event over the rate is held, its
 * body not yet read, never refused: the provider retries a failed delivery only three times, so a
 * 503 here could lose an event, and a held one costs its sender nothing but time. No event is held
 * longer than `holdMaxMs`: past that, events are taken as they come, whatever the rate.
 *
 * On two cores every event the inbox takes costs the proxy's requests CPU time they wait for (its
 * parsing, its commit, its delivery and the application's answer), whichever thread or process does
 * the work; a rate is the one bound that holds for all of them (docs/performance.md, issue 46).
 */

export interface PacingPolicy {
  /** Events a second while the proxy is busy; 0: never paced. */
  ratePerS: number
  /** Events taken at once, before the rate applies. */
  burst: number
  /** The proxy counts as busy this long after its last forwarded request. */
  busyWindowMs: number
  /** The longest an event is held. */
  holdMaxMs: number
}

export const PACING_BUSY_WINDOW_MS = 1_000
/**
 * A store that cannot take an event is answered 503 within 5 s (SPEC §10), and the SQLite store's
 * requests fail after 4 s (sqlite/sqlite-thread.ts; Redis's after 2): a hold of at most 0.8 s keeps
 * that answer within the 5 s, with 0.2 s to spare.
 */
export const PACING_HOLD_MAX_MS = 800

export function pacingPolicy (ratePerS: number): PacingPolicy {
  return {
    ratePerS,
    burst: Math.max(1, Math.ceil(ratePerS / 10)),
    busyWindowMs: PACING_BUSY_WINDOW_MS,
    holdMaxMs: PACING_HOLD_MAX_MS,
  }
}

/** The time from which the next event's slot is counted. */
export interface PacingState { nextSlotMs: number }

export const FRESH_PACING: PacingState = { nextSlotMs: -Infinity }

/**
 * How long the event arriving at `nowMs` waits, the proxy having last forwarded `proxyIdleMs` ago
 * (negative: the wall clock stepped back, read as idle).
 */
export function paceIntake (
  state: PacingState,
  nowMs: number,
  proxyIdleMs: number,
  policy: PacingPolicy,
): { waitMs: number, state: PacingState } {
  const busy = policy.ratePerS > 0 && proxyIdleMs >= 0 && proxyIdleMs < policy.busyWindowMs
  if (!busy) return { waitMs: 0, state }
  const interval = 1000 / policy.ratePerS
  const slot = Math.max(state.nextSlotMs, nowMs - (policy.burst - 1) * interval)
  const waitMs = Math.min(Math.max(0, slot - nowMs), policy.holdMaxMs)
  return { waitMs, state: { nextSlotMs: Math.min(slot + interval, nowMs + policy.holdMaxMs) } }
}

/** What the intake route asks for each event: how long to hold it (the state kept here). */
export interface IntakePacer { waitMs: () => number }

export function createIntakePacer (policy: PacingPolicy, proxyIdleMs: () => number, nowMs: () => number): IntakePacer {
  let state = FRESH_PACING
  return {
    waitMs () {
      const paced = paceIntake(state, nowMs(), proxyIdleMs(), policy)
      state = paced.state
      return paced.waitMs
    },
  }
}
