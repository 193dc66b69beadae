import { createMemoryStore } from './memory-store.js';
import { noStoreObserver } from './store-metrics.js';
/** Redis (and ioredis) is loaded only when configured: a one-replica sidecar never pays its start-up. */
export async function createStore(config, deps) {
    const observer = deps.observer ?? noStoreObserver;
    if (config.state.redisUrl === null) {
        observer.up('memory', true);
        return createMemoryStore({ clock: deps.clock });
    }
    const { createRedisStore } = await import('./redis-store.js');
    return createRedisStore({ url: config.state.redisUrl, keyPrefix: config.state.keyPrefix, log: deps.log, observer });
}
//# sourceMappingURL=create-store.js.map