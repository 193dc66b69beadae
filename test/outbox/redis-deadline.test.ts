/**
 * The Redis outbox store's command deadline against a real redis-server (SPEC §10): a reply that
 * reached the socket while this process's loop was held past the deadline is read and counts (an
 * event Redis stored is never reported failed, so never answered 503), and a Redis that truly does
 * not answer fails the intake within 5 s, the store answering again once Redis does.
 */
import t, { type Test } from 'tap'
import { Redis } from 'ioredis'
import { WebhookStoreUnavailableError } from '../../src/errors.js'
import type { NewEvent, OutboxStore } from '../../src/outbox/outbox-store.js'
import { createRedisOutboxStore } from '../../src/outbox/redis-store.js'
import { eventually } from '../helpers/eventually.js'
import { captureLogger } from '../helpers/harness.js'
import { redisConnection, startRedis, stallProbe, type RedisServer } from '../helpers/redis-server.js'

/** Past the store's 2 s command deadline, with room for a loaded machine's Redis to have answered. */
const HELD_MS = 3000

let n = 0
const event = (): NewEvent => {
  const i = n++
  return { key: `id:held${i}`, bodySha256: `h${i}`, orderKey: null, body: Buffer.from(`{"n":${i}}`), headers: [['content-type', 'application/json']], source: '203.0.113.7', receivedAtMs: Date.now() }
}

async function storeOn (t: Test, redis: RedisServer): Promise<OutboxStore> {
  const store = createRedisOutboxStore({ redis: redisConnection(t, redis.url, 'test:'), keys: '', log: captureLogger().logger, retentionMs: 86_400_000, maxEvents: 1000, maxBytes: 1 << 20, orderMaxWaitMs: 86_400_000 })
  t.teardown(() => store.close())
  await eventually(() => store.ready(), { what: 'Redis store ready' })
  return store
}

const settled = async <T>(p: Promise<T>): Promise<{ ok: true, value: T } | { ok: false, error: unknown }> => {
  try {
    return { ok: true, value: await p }
  } catch (error) {
    return { ok: false, error }
  }
}

t.test('a loop held past the deadline right after an intake is sent: the reply already in the socket is read, the event reported stored', async (t) => {
  const redis = await startRedis(t)
  const store = await storeOn(t, redis)
  t.equal((await store.intake(event())).kind, 'stored', 'the intake script is loaded on the connection')
  // Sent from a setImmediate callback, the next turn begins with its timers, before its I/O: the
  // order in which a held loop (a burst being parsed, a starved CPU) meets an expired deadline.
  const sent = await new Promise<Array<Promise<unknown>>>((resolve) => {
    setImmediate(() => {
      const pending = [store.intake(event()), store.claimDue(Date.now() + 60_000, 10, 60_000)]
      const until = Date.now() + HELD_MS
      while (Date.now() < until) { /* held: Redis answers meanwhile */ }
      resolve(pending)
    })
  })
  const [intake, claim] = await Promise.all(sent.map(settled))
  t.match(intake, { ok: true, value: { kind: 'stored' } }, 'the intake Redis acknowledged is reported stored, not failed')
  t.match(claim, { ok: true, value: { length: 2 } }, 'so is any other command whose reply had arrived: the claim took both events')
})

t.test('a Redis that does not answer (DEBUG SLEEP) fails the intake within 5 s; the store answers again when Redis does', async (t) => {
  const redis = await startRedis(t)
  const store = await storeOn(t, redis)
  const admin = new Redis(redis.url, { lazyConnect: true })
  t.teardown(() => admin.disconnect())
  await admin.connect()
  const probe = await stallProbe(t, redis.url)
  const sleeping = admin.call('DEBUG', 'SLEEP', '4').catch(() => null)
  await probe.untilBlocked()
  const started = Date.now()
  const stalled = event()
  const outcome = await settled(store.intake(stalled))
  const tookMs = Date.now() - started
  t.ok(!outcome.ok && outcome.error instanceof WebhookStoreUnavailableError, 'the intake fails: the inbox answers 503')
  t.ok(tookMs >= 1900 && tookMs < 5000, `within SPEC §10's 5 s, after the 2 s deadline (${tookMs} ms)`)
  await sleeping
  // The late reply to the failed command is matched to it, not to the next one (the retry's).
  t.equal((await store.intake(stalled)).kind, 'duplicate', 'Redis stored the failed intake after all: the provider\'s retry is a duplicate')
  t.equal((await store.stats()).pending, 1)
})
