/** How long `check` gives Redis to connect and answer. */
export const CHECK_STORE_TIMEOUT_MS = 5000;
export async function checkStore(config, log) {
    if (config.state.redisUrl === null)
        return { ok: true, line: 'skip  state store: in memory (PROXY_REDIS_URL not set)' };
    const { createRedisStore } = await import('./redis-store.js');
    const store = createRedisStore({ url: config.state.redisUrl, keyPrefix: config.state.keyPrefix, log });
    try {
        const deadline = Date.now() + CHECK_STORE_TIMEOUT_MS;
        while (!store.status().ready && Date.now() < deadline)
            await new Promise((resolve) => setTimeout(resolve, 50));
        await store.ping();
        return { ok: true, line: 'ok    state store: Redis answers' };
    }
    catch {
        // Never the URL: it may hold a password.
        return { ok: false, line: 'FAIL  state store: Redis did not answer within 5 s: check PROXY_REDIS_URL (or PROXY_REDIS_URL_FILE), its password and the network' };
    }
    finally {
        await store.close();
    }
}
//# sourceMappingURL=check-store.js.map