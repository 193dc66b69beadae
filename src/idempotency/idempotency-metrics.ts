/**
 * What the idempotency layer decided (issue 26: replays, in-flight conflicts, reuse refusals), one
 * counter labelled by outcome, registered on the registry `ops/metrics.ts` owns.
 */
import { Counter, type Registry } from 'prom-client'

export type IdempotencyOutcome = 'claimed' | 'replayed' | 'in_flight' | 'reused' | 'recorded' | 'not_recorded' | 'unavailable'

export interface IdempotencyObserver {
  outcome: (outcome: IdempotencyOutcome) => void
}

export function createIdempotencyMetrics (registry: Registry, prefix: string): IdempotencyObserver {
  const outcomes = new Counter({
    name: `${prefix}idempotency_outcomes_total`,
    help: 'Idempotent requests by outcome: claimed, replayed, in_flight (409), reused (422), recorded, not_recorded, unavailable (503)',
    labelNames: ['outcome'],
    registers: [registry],
  })
  return { outcome: (outcome) => { outcomes.inc({ outcome }) } }
}
