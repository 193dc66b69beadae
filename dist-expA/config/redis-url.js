/**
 * The shared store's address (SPEC §9) from PROXY_REDIS_URL or the file named by PROXY_REDIS_URL_FILE.
 * The URL may hold a password, so it is a secret: problems name the variable, never the value.
 */
import { readFileSync } from 'node:fs';
export function resolveRedisUrl(direct, file) {
    if (direct !== undefined && file !== undefined) {
        return { url: null, problems: ['PROXY_REDIS_URL and PROXY_REDIS_URL_FILE are both set: use one'] };
    }
    let name = 'PROXY_REDIS_URL';
    let value = direct;
    if (file !== undefined) {
        name = 'PROXY_REDIS_URL_FILE';
        try {
            // Secret files conventionally end with a newline (echo, kubectl create secret --from-file).
            value = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
        }
        catch (err) {
            return { url: null, problems: [`PROXY_REDIS_URL_FILE: cannot read ${file} (${err.code ?? 'error'})`] };
        }
        if (value === '')
            return { url: null, problems: [`PROXY_REDIS_URL_FILE: ${file} is empty`] };
    }
    if (value === undefined)
        return { url: null, problems: [] };
    return isRedisUrl(value) ? { url: value, problems: [] } : { url: null, problems: [`${name} must be a redis:// or rediss:// URL (e.g. redis://redis:6379/0)`] };
}
function isRedisUrl(value) {
    if (!/^rediss?:\/\/[^\s]+$/i.test(value))
        return false;
    try {
        const url = new URL(value);
        return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '';
    }
    catch {
        return false;
    }
}
//# sourceMappingURL=redis-url.js.map