/**
 * The shared store's metrics (SPEC §9: "a metric set" while it is down): an up gauge, command
 * latency and errors. Registered on the registry `ops/metrics.ts` owns; labels are the store kind and
 * the operation, never a key.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
export const noStoreObserver = { up() { }, command() { }, error() { } };
/** `prefix` is the registry's metric name prefix (ops/metrics.ts), passed in so state/ stays below ops/. */
export function createStoreMetrics(registry, prefix) {
    const p = prefix;
    const up = new Gauge({
        name: `${p}state_store_up`, help: 'Whether the state store answers (1) or not (0), by kind (memory, redis)', labelNames: ['kind'], registers: [registry],
    });
    const latency = new Histogram({
        name: `${p}state_store_command_duration_seconds`, help: 'State store round trips by operation', labelNames: ['op'], registers: [registry],
        buckets: [0.0002, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1],
    });
    const errors = new Counter({
        name: `${p}state_store_errors_total`, help: 'State store operations that failed (store down, timeout), by operation', labelNames: ['op'], registers: [registry],
    });
    return {
        up: (kind, isUp) => { up.set({ kind }, isUp ? 1 : 0); },
        command: (op, seconds) => { latency.observe({ op }, seconds); },
        error: (op) => { errors.inc({ op }); },
    };
}
//# sourceMappingURL=store-metrics.js.map