/**
 * The shared store's address (SPEC §9) from PROXY_REDIS_URL or the file named by PROXY_REDIS_URL_FILE.
 * The URL may hold a password, so it is a secret: problems name the variable, never the value.
 */
import { readFileSync } from 'node:fs'

export interface RedisUrlResult { url: string | null, problems: string[] }

/**
 * Redis and Valkey ship with `databases 16`. A number outside it, or not a number, is refused here:
 * ioredis would send `SELECT NaN`, or carry on in database 0 after the server refused the SELECT.
 * A server configured with more databases can still be given 0-15.
 */
export const REDIS_MAX_DATABASE = 15

export function resolveRedisUrl (direct: string | undefined, file: string | undefined): RedisUrlResult {
  if (direct !== undefined && file !== undefined) {
    return { url: null, problems: ['PROXY_REDIS_URL and PROXY_REDIS_URL_FILE are both set: use one'] }
  }
  let name = 'PROXY_REDIS_URL'
  let value = direct
  if (file !== undefined) {
    name = 'PROXY_REDIS_URL_FILE'
    try {
      // Secret files conventionally end with a newline (echo, kubectl create secret --from-file).
      value = readFileSync(file, 'utf8').replace(/\r?\n$/, '')
    } catch (err) {
      return { url: null, problems: [`PROXY_REDIS_URL_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`] }
    }
    if (value === '') return { url: null, problems: [`PROXY_REDIS_URL_FILE: ${file} is empty`] }
  }
  if (value === undefined) return { url: null, problems: [] }
  const url = parseRedisUrl(value)
  if (url === null) return { url: null, problems: [`${name} must be a redis:// or rediss:// URL (e.g. redis://redis:6379/0)`] }
  const databases = [url.pathname === '/' || url.pathname === '' ? '0' : url.pathname.slice(1), ...url.searchParams.getAll('db')]
  if (!databases.every(isDatabaseNumber)) {
    return { url: null, problems: [`${name}: the database number (the path after the port, e.g. /0) must be a whole number from 0 to ${REDIS_MAX_DATABASE}`] }
  }
  return { url: value, problems: [] }
}

function parseRedisUrl (value: string): URL | null {
  if (!/^rediss?:\/\/[^\s]+$/i.test(value)) return null
  try {
    const url = new URL(value)
    return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '' ? url : null
  } catch {
    return null
  }
}

function isDatabaseNumber (text: string): boolean {
  return /^(0|[1-9][0-9]?)$/.test(text) && Number(text) <= REDIS_MAX_DATABASE
}
