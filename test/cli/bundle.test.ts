/**
 * npm start and the image run the esbuild bundle (scripts/bundle.mjs), not dist/: its chunks loaded
 * on demand and undici's dispatchers-only entry (scripts/undici-dispatchers.cjs) must carry what the
 * code in dist/ uses. Every CLI test runs the bundle (`check` in check.test.ts); these reach the
 * chunks that a callers file, Redis and `caller-key` load.
 */
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import t from 'tap'
import { request } from 'undici'
import { keySha256 } from '../../src/callers/judge-caller.js'
import { CLI, listeningPort, runCli } from '../helpers/child-proxy.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'
import { payoutAgentCallersFile } from '../callers/payout-agent.js'

const AGENT_KEY = 'pak_bundle-agent-key-0123456789abcdefghijklmnopqrs'

t.test('the bundle is cli.mjs and chunks loaded on demand, each with its source map', async (t) => {
  const chunks = readdirSync(join(dirname(CLI), 'chunks'))
  for (const name of ['check', 'callers-holder', 'redis-store']) {
    t.ok(chunks.some((file) => file.startsWith(`${name}-`) && file.endsWith('.mjs')), `${name} is a chunk of its own`)
  }
  t.ok(chunks.filter((file) => file.endsWith('.mjs')).every((file) => chunks.includes(`${file}.map`)), 'every chunk has its map')
})

t.test('serving from the bundle: tokens, a payout with the Bearer token, its replay from Redis, a callers file', async (t) => {
  const provider = await startProvider(t)
  const redis = await startRedis(t)
  const child = runCli(t, [], providerEnv(provider, {
    PROXY_REDIS_URL: redis.url,
    PROXY_CALLERS_FILE: payoutAgentCallersFile('bundle-agent', AGENT_KEY),
  }))
  await child.waitFor(/token obtained[\s\S]*token obtained/)
  const origin = `http://127.0.0.1:${listeningPort(child)}`

  const ready = await request(`${origin}/readyz`)
  t.equal(ready.statusCode, 200)
  t.match(await ready.body.json(), { ready: true, state: { ready: true } })

  const payout = JSON.stringify({ externalReference: 'bundle-1', amount: '50', currency: 'KES' })
  const send = async (): Promise<{ status: number, replayed: unknown }> => {
    const res = await request(`${origin}/sandbox/fiat/payouts/mobile`, {
      method: 'POST', body: payout, headers: { 'content-type': 'application/json', authorization: `Bearer ${AGENT_KEY}` },
    })
    await res.body.dump()
    return { status: res.statusCode, replayed: res.headers['idempotent-replayed'] }
  }
  t.same(await send(), { status: 200, replayed: undefined }, 'the first payout is forwarded')
  t.same(await send(), { status: 200, replayed: 'true' }, 'the retry is answered from the record in Redis')
  const refused = await request(`${origin}/sandbox/fiat/balances`, { headers: { authorization: `Bearer ${AGENT_KEY}` } })
  await refused.body.dump()
  t.equal(refused.statusCode, 403, 'the callers file is in force: a path it does not allow is refused')

  const forwarded = provider.upstreamRequests.filter((r) => r.url.includes('/payouts/'))
  t.equal(forwarded.length, 1, 'the payout reached the provider once')
  t.ok(forwarded.every((r) => r.tokenValid), 'with a valid Bearer token')
})

t.test('caller-key from the bundle: a new key and its keySha256 line', async (t) => {
  const child = runCli(t, ['caller-key'], {})
  t.equal((await child.exited).code, 0, child.stderr())
  const key = /pak_[A-Za-z0-9_-]{43}/.exec(child.stdout())?.[0]
  if (key === undefined) t.fail(`no key in:\n${child.stdout()}`)
  else t.match(child.stdout(), new RegExp(`keySha256: ${keySha256(key)}`))
})
