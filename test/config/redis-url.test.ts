import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { loadConfig, type Env } from '../../src/load-config.js'
import { problemsOf } from '../helpers/config-problems.js'

const base: Env = {
  PAYMENTS_FIAT_BASE_URL: 'https://fiat.example.com/api/b2b',
  PAYMENTS_CRYPTO_BASE_URL: 'https://crypto.example.com/api',
  PAYMENTS_SANDBOX_API_KEY: 'HC_marker_api_key_Zq81',
  PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_marker_public_Zq81',
}
const SECRET_URL = 'redis://:pw-marker-Zq81@redis.internal:6379/0'

t.test('no Redis setting means the memory store', async (t) => {
  t.equal(loadConfig(base).config.state.redisUrl, null)
})

t.test('PROXY_REDIS_URL and PROXY_REDIS_URL_FILE give the same URL', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'redis-url-'))
  const file = join(dir, 'url')
  writeFileSync(file, `${SECRET_URL}\n`)
  t.equal(loadConfig({ ...base, PROXY_REDIS_URL: SECRET_URL }).config.state.redisUrl, SECRET_URL)
  t.equal(loadConfig({ ...base, PROXY_REDIS_URL_FILE: file }).config.state.redisUrl, SECRET_URL, 'the trailing newline is dropped')
  t.equal(loadConfig({ ...base, PROXY_REDIS_URL: 'rediss://cache.example.com:6380' }).config.state.redisUrl, 'rediss://cache.example.com:6380')
  for (const db of ['/', '/0', '/9', '/15']) {
    t.equal(loadConfig({ ...base, PROXY_REDIS_URL: `redis://redis.internal:6379${db}` }).config.state.redisUrl, `redis://redis.internal:6379${db}`, `database ${db} is accepted`)
  }
})

t.test('Redis URL problems name the variable and never echo the value', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'redis-url-'))
  const empty = join(dir, 'empty')
  writeFileSync(empty, '')
  const bad = join(dir, 'bad')
  writeFileSync(bad, 'http://:pw-marker-Zq81@redis.internal:6379')
  const cases: Array<[string, Env, RegExp]> = [
    ['both set', { PROXY_REDIS_URL: SECRET_URL, PROXY_REDIS_URL_FILE: bad }, /^PROXY_REDIS_URL and PROXY_REDIS_URL_FILE are both set/],
    ['wrong scheme', { PROXY_REDIS_URL: 'http://:pw-marker-Zq81@redis.internal:6379' }, /^PROXY_REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/],
    ['wrong scheme in the file', { PROXY_REDIS_URL_FILE: bad }, /^PROXY_REDIS_URL_FILE must be a redis:\/\/ or rediss:\/\/ URL/],
    ['no host', { PROXY_REDIS_URL: 'redis://' }, /^PROXY_REDIS_URL must be/],
    ['empty file', { PROXY_REDIS_URL_FILE: empty }, /^PROXY_REDIS_URL_FILE: .* is empty/],
    ['missing file', { PROXY_REDIS_URL_FILE: join(dir, 'nope') }, /^PROXY_REDIS_URL_FILE: cannot read .* \(ENOENT\)/],
    // Issue 35 item 5: ioredis would send SELECT NaN, or stay in database 0 after a refused SELECT.
    ['a database that is not a number', { PROXY_REDIS_URL: 'redis://:pw-marker-Zq81@redis.internal:6379/banana' }, /^PROXY_REDIS_URL: the database number .* from 0 to 15/],
    ['a database out of the default range', { PROXY_REDIS_URL: 'redis://:pw-marker-Zq81@redis.internal:6379/16' }, /^PROXY_REDIS_URL: the database number/],
    ['a database with a sign', { PROXY_REDIS_URL: 'redis://redis.internal:6379/-1' }, /^PROXY_REDIS_URL: the database number/],
    ['a database with a leading zero', { PROXY_REDIS_URL: 'redis://redis.internal:6379/07' }, /^PROXY_REDIS_URL: the database number/],
    ['a database under a path', { PROXY_REDIS_URL: 'redis://redis.internal:6379/1/2' }, /^PROXY_REDIS_URL: the database number/],
    ['a db query that is not a number', { PROXY_REDIS_URL: 'redis://redis.internal:6379?db=x' }, /^PROXY_REDIS_URL: the database number/],
  ]
  for (const [label, env, expected] of cases) {
    const problems = problemsOf({ ...base, ...env })
    t.equal(problems.length, 1, label)
    t.match(problems[0] ?? '', expected, label)
    t.notMatch(problems.join('\n'), 'pw-marker-Zq81', `${label}: the password is not echoed`)
  }
})
