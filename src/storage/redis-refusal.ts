/**
 * What Redis answered when it refused the connection's set-up (AUTH, HELLO, SELECT), said so that
 * an operator knows what to change. Only the reply's error code and a sentence of ours: a reply can
 * quote what was sent, and what was sent may be the password.
 */

export interface RedisRefusal {
  sentence: string
  /**
   * A refused SELECT: ioredis reports it and then calls the connection ready in database 0, where
   * this replica would share nothing with the others. It holds until the URL is changed.
   */
  lasting: boolean
}

const KNOWN: ReadonlyArray<[RegExp, RedisRefusal]> = [
  [/^WRONGPASS/, { sentence: 'WRONGPASS: the user name or password in the URL is wrong', lasting: false }],
  [/^NOAUTH/, { sentence: 'NOAUTH: Redis requires a password and the URL has none (redis://:password@host:6379/0)', lasting: false }],
  [/^ERR .*(DB index is out of range|invalid DB index)/i, { sentence: 'ERR DB index is out of range: the database number in the URL is beyond this server\'s databases setting', lasting: true }],
  [/^NOPERM/, { sentence: 'NOPERM: the Redis user lacks a permission the proxy needs (scripts, keys under the prefix)', lasting: false }],
]

/** For an ioredis error: the refusal when it is a reply from Redis, else null (a network error). */
export function redisRefusal (err: Error): RedisRefusal | null {
  if (err.name !== 'ReplyError') return null
  for (const [pattern, refusal] of KNOWN) if (pattern.test(err.message)) return refusal
  const code = /^[A-Z]+/.exec(err.message)?.[0] ?? 'an error'
  return { sentence: `Redis answered ${code}`, lasting: false }
}
