/**
 * Stores sharing the process's one Redis connection (storage/redis-connection.ts) keep their own
 * command deadlines: during a stall (DEBUG SLEEP) the state store's command fails after its 1 s and
 * the inbox's intake after its 2 s, on the same socket; once Redis answers, each late reply is
 * matched to the command it answers, never to another store's next one.
 */
import t from 'tap'
import { Redis } from 'ioredis'
import { StateUnavailableError, WebhookStoreUnavailableError } from '../../src/errors.js'
import { createRedisOutboxStore } from '../../src/outbox/redis-store.js'
import { createRedisStore } from '../../src/state/redis-store.js'
import { eventually } from '../helpers/eventually.js'
import { captureLogger } from '../helpers/harness.js'
import { redisConnection, startRedis } from '../helpers/redis-server.js'

async function timed (p: Promise<unknown>): Promise<{ error: unknown, ms: number }> {
  const started = Date.now()
  try {
    await p
    return { error: null, ms: Date.now() - started }
  } catch (error) {
    return { error, ms: Date.now() - started }
  }
}

t.test('two stores on one connection: each its own deadline in a stall, each late reply its own', async (t) => {
  const redis = await startRedis(t)
  const connection = redisConnection(t, redis.url, 'test:', 'shared')
  const { logger, logs } = captureLogger()
  const state = createRedisStore({ redis: connection, log: logger })
  const inbox = createRedisOutboxStore({ redis: connection, keys: '', log: logger, retentionMs: 86_400_000, maxEvents: 1000, maxBytes: 1 << 20, orderMaxWaitMs: 86_400_000 })
  t.teardown(async () => { await state.close(); await inbox.close() })
  await eventually(() => state.status().ready && inbox.ready(), { what: 'both stores ready' })
  const admin = new Redis(redis.url, { lazyConnect: true, connectionName: 'test:admin' })
  t.teardown(() => admin.disconnect())
  await admin.connect()
  t.match(String(await admin.client('LIST')).match(/ name=pap:shared /g), { length: 1 }, 'one connection for both stores')

  const event = { key: 'id:stalled', bodySha256: 'h', orderKey: null, body: Buffer.from('{}'), headers: [['content-type', 'application/json']] as Array<[string, string]>, source: '203.0.113.7', receivedAtMs: Date.now() }
  const sleeping = admin.call('DEBUG', 'SLEEP', '3').catch(() => null)
  await new Promise((resolve) => setTimeout(resolve, 100))
  const [claim, intake] = await Promise.all([timed(state.claim('stalled-key', 60_000)), timed(inbox.intake(event))])
  t.ok(claim.error instanceof StateUnavailableError && claim.ms >= 900 && claim.ms < 1900, `the state store's claim fails after its 1 s (${claim.ms} ms)`)
  t.ok(intake.error instanceof WebhookStoreUnavailableError && intake.ms >= 1900 && intake.ms < 2900, `the intake fails after its own 2 s (${intake.ms} ms)`)
  await sleeping
  await eventually(() => state.status().ready, { what: 'the state store answering again' })
  // Redis ran both commands once it woke: their late replies went to them, not to these.
  t.equal((await state.claim('stalled-key', 60_000)).kind, 'in-flight', 'the timed-out claim was made after all')
  t.equal((await inbox.intake(event)).kind, 'duplicate', 'the timed-out intake was stored after all')
  t.equal((await inbox.stats()).pending, 1)
  t.equal(logs.find('state store unavailable').length, 1)
  t.equal(logs.find('state store recovered').length, 1)
})
