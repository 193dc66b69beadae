/**
 * `check` reaches the shared store (SPEC §6) when one is configured: connects, waits a few
 * seconds for it to answer a round trip, and says which setting to look at when it does not.
 */
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'

/** How long `check` gives Redis to connect and answer. */
export const CHECK_STORE_TIMEOUT_MS = 5000

export async function checkStore (config: Pick<Config, 'state'>, log: Logger): Promise<{ ok: boolean, line: string }> {
  if (config.state.redisUrl === null) return { ok: true, line: 'skip  state store: in memory (PROXY_REDIS_URL not set)' }
  const { createRedisStore } = await import('./redis-store.js')
  const store = createRedisStore({ url: config.state.redisUrl, keyPrefix: config.state.keyPrefix, log })
  try {
    const deadline = Date.now() + CHECK_STORE_TIMEOUT_MS
    // Redis answering with a refusal (a wrong password) is an answer: no need to wait out the deadline.
    while (!store.status().ready && store.status().refusal === undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    const { refusal } = store.status()
    if (refusal !== undefined) return { ok: false, line: `FAIL  state store: Redis refused the connection: ${refusal} (PROXY_REDIS_URL or PROXY_REDIS_URL_FILE)` }
    await store.ping()
    return { ok: true, line: 'ok    state store: Redis answers' }
  } catch {
    // Never the URL: it may hold a password.
    return { ok: false, line: 'FAIL  state store: Redis did not answer within 5 s: check PROXY_REDIS_URL (or PROXY_REDIS_URL_FILE), its password and the network' }
  } finally {
    await store.close()
  }
}
