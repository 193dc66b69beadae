/**
 * `check`'s one question to the configured Redis (state/check-store.ts): one connection, one bounded
 * wait, what the server answered. Its own module so that ioredis is loaded only when Redis is set.
 */
import { Redis } from 'ioredis'
import type { Logger } from 'pino'
import { redisClientOptions, REDIS_CONNECT_TIMEOUT_MS } from '../storage/redis-connection.js'
import { waitFor } from '../storage/wait-for.js'
import { redisRefusal, type RedisRefusal } from '../storage/redis-refusal.js'

/** Each connection attempt and the INFO command, as the stores' own connection bounds its attempts. */
const ATTEMPT_TIMEOUT_MS = REDIS_CONNECT_TIMEOUT_MS

export type RedisAnswer =
  /** A round trip answered; `appendOnly` null when the server would not say (INFO refused). */
  | { kind: 'answers', appendOnly: boolean | null }
  /** Redis answered the connection's set-up with a refusal (a wrong password, a database out of range). */
  | { kind: 'refused', sentence: string }
  /** No answer within the wait: the last connection error's code, or what happened to the connection. */
  | { kind: 'silent', reason: string }

/**
 * Connects, waits until Redis answers, refuses or the time is up, and asks for its persistence
 * settings; one log line when it does not answer (the stores' own clients would log every reconnect).
 */
export async function askRedis (url: string, log: Logger, timeoutMs: number): Promise<RedisAnswer> {
  // A connection of its own, not the stores' (storage/redis-connection.ts): it asks once, with bounds
  // of its own, and reports what this attempt met.
  const client = new Redis(url, redisClientOptions('check', {
    commandTimeout: ATTEMPT_TIMEOUT_MS,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 500),
    // ioredis waits this long for a stream to close at disconnect, even one that never opened:
    // its 2 s default kept check's process alive after its report.
    disconnectTimeout: 100,
  }))
  let refusal: RedisRefusal | null = null
  let reason = 'no connection'
  // Only an error's code, or which refusal it was: ioredis messages can carry the address or URL.
  client.on('error', (err: NodeJS.ErrnoException) => {
    refusal = redisRefusal(err) ?? refusal
    reason = err.code ?? (/^Unknown RESP type/.test(err.message) ? 'something answered, but not in Redis\'s protocol' : err.name)
  })
  client.on('close', () => { if (reason === 'no connection') reason = 'connection closed by the server' })
  client.connect().catch(() => {})
  try {
    // A refusal is an answer: no need to wait out the time. ioredis calls a connection whose SELECT
    // was refused ready, in database 0: the refusal is still the answer.
    await waitFor(() => client.status === 'ready' || refusal !== null, timeoutMs)
    const refused = refusal as RedisRefusal | null
    if (refused !== null) return unanswered({ kind: 'refused', sentence: refused.sentence }, log)
    if (client.status !== 'ready') return unanswered({ kind: 'silent', reason }, log)
    try {
      return { kind: 'answers', appendOnly: !/aof_enabled:0/.test(await client.info('persistence')) }
    } catch (err) {
      if ((err as Error).name === 'ReplyError') return { kind: 'answers', appendOnly: null }
      return unanswered({ kind: 'silent', reason: (err as NodeJS.ErrnoException).code ?? 'no answer to INFO' }, log)
    }
  } finally {
    client.disconnect()
  }
}

function unanswered (answer: Exclude<RedisAnswer, { kind: 'answers' }>, log: Logger): RedisAnswer {
  log.error({ reason: answer.kind === 'refused' ? answer.sentence : answer.reason }, 'state store unavailable')
  return answer
}
