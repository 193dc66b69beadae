/**
 * The shared StateStore (SPEC §9): records, rate windows and day totals in Redis or Valkey, so every
 * replica enforces one set. ioredis rather than node-redis: `defineCommand` runs our Lua scripts by
 * EVALSHA with the EVAL fallback built in, `rediss://` gives TLS from the URL alone, and its
 * reconnect logic is mature. Its defaults queue commands while Redis is down and retry each 20
 * times, so a request would hang instead of getting 503: here every command fails fast when the
 * client is not ready, and reconnects are at most a second apart, so recovery is automatic.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { StateUnavailableError } from '../errors.js';
import { ABORT_LUA, CLAIM_LUA, FINISH_LUA, HIT_LUA, RELEASE_LUA, RESERVE_LUA } from './redis-lua.js';
import { decodeRecord, encodeRecord } from './record-codec.js';
import { noStoreObserver } from './store-metrics.js';
/** A command not answered within this is a failure (SPEC §9: 503 within 2 s, never hanging). */
export const REDIS_COMMAND_TIMEOUT_MS = 1000;
/** Reconnect backoff cap: the store is back within about a second of Redis. */
export const REDIS_RECONNECT_MAX_MS = 1000;
export function createRedisStore(options) {
    const { log } = options;
    const observer = options.observer ?? noStoreObserver;
    const client = new Redis(options.url, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
        connectTimeout: REDIS_COMMAND_TIMEOUT_MS,
        retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, REDIS_RECONNECT_MAX_MS),
        lazyConnect: true,
        keyPrefix: options.keyPrefix,
    });
    client.defineCommand('papClaim', { numberOfKeys: 1, lua: CLAIM_LUA });
    client.defineCommand('papFinish', { numberOfKeys: 1, lua: FINISH_LUA });
    client.defineCommand('papAbort', { numberOfKeys: 1, lua: ABORT_LUA });
    client.defineCommand('papHit', { numberOfKeys: 1, lua: HIT_LUA });
    client.defineCommand('papReserve', { numberOfKeys: 1, lua: RESERVE_LUA });
    client.defineCommand('papRelease', { numberOfKeys: 1, lua: RELEASE_LUA });
    const scripts = client;
    // One error line per outage, not per request or per reconnect attempt.
    let down = false;
    let closing = false;
    const markDown = (reason) => {
        observer.up('redis', false);
        if (down || closing)
            return;
        down = true;
        log.error({ reason }, 'state store unavailable');
    };
    observer.up('redis', false);
    // ioredis messages can carry the address or URL: only the error's code reaches the log.
    client.on('error', (err) => { markDown(err.code ?? err.name); });
    client.on('close', () => { markDown('connection closed'); });
    const markUp = () => {
        observer.up('redis', true);
        if (down)
            log.info('state store recovered');
        down = false;
    };
    client.on('ready', markUp);
    // A failed first connection is reported by the 'error' listener and retried by retryStrategy.
    client.connect().catch(() => { });
    async function run(op, command) {
        if (client.status !== 'ready') {
            observer.error(op);
            throw new StateUnavailableError();
        }
        const started = performance.now();
        try {
            const result = await command();
            observer.command(op, (performance.now() - started) / 1000);
            // A timeout marks an outage without closing the connection: the next answer ends it.
            if (down)
                markUp();
            return result;
        }
        catch (err) {
            observer.error(op);
            markDown(err.code ?? err.name);
            throw new StateUnavailableError();
        }
    }
    const idem = (key) => `i:${key}`;
    return {
        async claim(key, inFlightTtlMs) {
            const owner = randomUUID();
            const found = await run('claim', () => scripts.papClaim(idem(key), owner, inFlightTtlMs));
            if (found === null)
                return { kind: 'claimed', owner };
            if (found.startsWith('r:')) {
                const record = decodeRecord(found.slice(2));
                if (record !== null)
                    return { kind: 'recorded', record };
            }
            return { kind: 'in-flight' };
        },
        async finish(key, owner, record, ttlMs) {
            await run('finish', () => scripts.papFinish(idem(key), owner, encodeRecord(record), ttlMs));
        },
        async abort(key, owner) {
            await run('abort', () => scripts.papAbort(idem(key), owner));
        },
        async hit(key, limit, windowMs) {
            const [admitted, retryAfterMs] = await run('hit', () => scripts.papHit(`r:${key}`, limit, windowMs, randomUUID()));
            return { admitted: admitted === 1, retryAfterMs: admitted === 1 ? 0 : retryAfterMs };
        },
        async reserve(key, amount, limit, ttlMs) {
            if (amount > limit)
                return false;
            const ok = await run('reserve', () => scripts.papReserve(`d:${key}`, amount.toString(), limit.toString(), ttlMs));
            return ok === 1;
        },
        async release(key, amount) {
            await run('release', () => scripts.papRelease(`d:${key}`, amount.toString()));
        },
        status: () => ({ kind: 'redis', ready: client.status === 'ready' }),
        async ping() {
            await run('ping', () => client.ping());
        },
        async close() {
            closing = true;
            client.disconnect();
        },
    };
}
//# sourceMappingURL=redis-store.js.map