/**
 * `check` and the shared store (SPEC §6, §9): one connection asks the configured Redis once, within
 * one bounded wait, and every store kept there (the state store, approvals, the webhook inbox) reports
 * from that answer, so an unreachable Redis costs the check one wait, not one per store. Each line
 * says what the server answered (a refusal's code and what to change), never the URL: it may hold a
 * password.
 */
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import type { RedisAnswer } from './ask-redis.js'

export type { RedisAnswer } from './ask-redis.js'

/** How long `check` gives Redis to connect and answer, once for the whole check. */
export const CHECK_STORE_TIMEOUT_MS = 5000

/** The check's one question to Redis (ask-redis.ts, loaded only now). */
export async function askRedis (url: string, log: Logger): Promise<RedisAnswer> {
  return await (await import('./ask-redis.js')).askRedis(url, log, CHECK_STORE_TIMEOUT_MS)
}

/** What a store's check line says when Redis did not answer as it must. */
export function redisProblem (answer: Exclude<RedisAnswer, { kind: 'answers' }>): string {
  if (answer.kind === 'refused') return `Redis refused the connection: ${answer.sentence} (PROXY_REDIS_URL or PROXY_REDIS_URL_FILE)`
  return `Redis did not answer within ${CHECK_STORE_TIMEOUT_MS / 1000} s (${answer.reason}): check PROXY_REDIS_URL (or PROXY_REDIS_URL_FILE), the server and the network`
}

/**
 * The answer as a store's check needs it, for the inbox's (webhooks/check-inbox.ts), which imports
 * nothing of the proxy's state: either Redis answers, or the words its line says.
 */
export type RedisFinding = { answers: true, appendOnly: boolean | null } | { answers: false, problem: string }

export function redisFinding (answer: RedisAnswer): RedisFinding {
  return answer.kind === 'answers' ? { answers: true, appendOnly: answer.appendOnly } : { answers: false, problem: redisProblem(answer) }
}

/** The state store's line; `answer` is the check's one question to Redis, asked here when not given. */
export async function checkStore (config: Pick<Config, 'state'>, log: Logger, answer?: Promise<RedisAnswer>): Promise<{ ok: boolean, line: string }> {
  if (config.state.redisUrl === null) return { ok: true, line: 'skip  state store: in memory (PROXY_REDIS_URL not set)' }
  const answered = await (answer ?? askRedis(config.state.redisUrl, log))
  if (answered.kind !== 'answers') return { ok: false, line: `FAIL  state store: ${redisProblem(answered)}` }
  return { ok: true, line: 'ok    state store: Redis answers' }
}
