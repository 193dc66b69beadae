/**
 * SPEC §9: the shared store never holds a caller key (nor the API Key, Public Key or a Bearer
 * token). test/idempotency/replicas.test.ts scans a store written without a callers file; this one
 * writes every kind of record a caller makes (rate window, day total, idempotency record) into a
 * real redis-server and reads every key and value back.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import t from 'tap'
import { request } from 'undici'
import { keySha256 } from '../../src/callers/judge-caller.js'
import { eventually } from '../helpers/eventually.js'
import { DEMO_CREDENTIALS, providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'

const KEY = 'pak_store-scan-agent-key-0123456789abcdefghijklmnop'

t.test('every key and value the proxy writes to Redis for a caller holds no caller key or other secret', async (t) => {
  const file = join(mkdtempSync(join(tmpdir(), 'store-contents-')), 'callers.yaml')
  writeFileSync(file, `callers:
  - id: scan-agent
    keySha256: ${keySha256(KEY)}
    allow: [{}]
    rateLimit: { requests: 100, perSeconds: 60 }
    amountLimits:
      - amount: /amount
        currency: /currency
        perDay: { KES: 1000 }
`)
  const provider = await startProvider(t)
  const redis = await startRedis(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: file, PROXY_REDIS_URL: redis.url }))
  await waitReady(proxy)
  await eventually(() => proxy.store.status().ready, { what: 'the proxy to reach Redis' })
  for (const ref of ['scan-1', 'scan-2']) {
    const res = await request(`${proxy.url}/sandbox/fiat/payouts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ externalReference: ref, amount: '10', currency: 'KES' }),
    })
    await res.body.text()
    t.equal(res.statusCode, 200, `payout ${ref} forwarded`)
  }

  const admin = new Redis(redis.url)
  admin.on('error', () => {})
  t.teardown(() => admin.disconnect())
  const keys = await admin.keys('*')
  const kinds = new Set(keys.map((k) => /^[^:]*:(\w):/.exec(k)?.[1]))
  t.same([...kinds].sort(), ['d', 'i', 'r'], `a day total, idempotency records and a rate window were written (${keys.join(', ')})`)
  const values: string[] = []
  for (const key of keys) {
    const type = await admin.type(key)
    if (type === 'string') values.push(String(await admin.get(key)))
    else if (type === 'hash') values.push(JSON.stringify(await admin.hgetall(key)))
    else if (type === 'zset') values.push(JSON.stringify(await admin.zrange(key, '0', '-1', 'WITHSCORES')))
    else if (type === 'list') values.push(JSON.stringify(await admin.lrange(key, 0, -1)))
    else if (type === 'set') values.push(JSON.stringify(await admin.smembers(key)))
    else t.fail(`${key}: a ${type} this scan cannot read`)
  }
  t.equal(values.length, keys.length, 'every value was read')
  const dump = [...keys, ...values].join('\n')
  const secrets: Array<[string, string]> = [['the caller key', KEY], ['the caller key without its prefix', KEY.slice(4)]]
  for (const [environment, c] of Object.entries(DEMO_CREDENTIALS)) secrets.push([`the ${environment} API key`, c.apiKey], [`the ${environment} public key`, c.publicKey])
  for (const token of provider.issuedTokens) secrets.push(['an issued token', token])
  t.ok(provider.issuedTokens.length > 0, 'tokens were issued')
  for (const [name, secret] of secrets) t.notOk(dump.includes(secret), `no ${name} in the store`)
})
