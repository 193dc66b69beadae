import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { loadConfig, type Env } from '../../src/config/load-config.js'
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
  ]
  for (const [label, env, expected] of cases) {
    const problems = problemsOf({ ...base, ...env })
    t.equal(problems.length, 1, label)
    t.match(problems[0] ?? '', expected, label)
    t.notMatch(problems.join('\n'), 'pw-marker-Zq81', `${label}: the password is not echoed`)
  }
})
