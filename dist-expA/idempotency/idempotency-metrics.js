/**
 * What the idempotency layer decided (issue 26: replays, in-flight conflicts, reuse refusals), one
 * counter labelled by outcome, registered on the registry `ops/metrics.ts` owns.
 */
import { Counter } from 'prom-client';
export const noIdempotencyObserver = { outcome() { } };
export function createIdempotencyMetrics(registry, prefix) {
    const outcomes = new Counter({
        name: `${prefix}idempotency_outcomes_total`,
        help: 'Idempotent requests by outcome: claimed, replayed, in_flight (409), reused (422), recorded, not_recorded, unavailable (503)',
        labelNames: ['outcome'],
        registers: [registry],
    });
    return { outcome: (outcome) => { outcomes.inc({ outcome }); } };
}
//# sourceMappingURL=idempotency-metrics.js.map