/**
 * What payments read of the inbox (SPEC §12, through the outbox store contract): every stored event,
 * whatever its delivery status, in the order stored, after a sequence number, on both stores and
 * after a restart; duplicates are not stored again, so not read again; removed events are gone.
 */
import t, { type Test } from 'tap'
import { join } from 'node:path'
import type { NewEvent, OutboxStore } from '../../src/outbox/outbox-store.js'
import { createRedisOutboxStore } from '../../src/outbox/redis-store.js'
import { createSqliteStore } from '../../src/outbox/sqlite-store.js'
import { eventually } from '../helpers/eventually.js'
import { captureLogger } from '../helpers/harness.js'
import { redisConnection, startRedis } from '../helpers/redis-server.js'
import { tempDir } from '../webhooks/inbox-harness.js'

const bounds = { retentionMs: 86_400_000, maxEvents: 1000, maxBytes: 1 << 20, orderMaxWaitMs: 86_400_000 }
const factories: Array<{ name: string, make: (t: Test) => Promise<() => Promise<OutboxStore>> }> = [{
  name: 'sqlite',
  async make (t) {
    const path = join(tempDir(t), 'webhooks.db')
    return async () => {
      const store = await createSqliteStore({ path, log: captureLogger().logger, ...bounds })
      t.teardown(() => store.close())
      return store
    }
  },
}, {
  name: 'redis',
  async make (t) {
    const redis = await startRedis(t)
    return async () => {
      const store = createRedisOutboxStore({ redis: redisConnection(t, redis.url, 'test:'), keys: '', log: captureLogger().logger, ...bounds })
      t.teardown(() => store.close())
      await eventually(() => store.ready(), { what: 'Redis store ready' })
      return store
    }
  },
}]

const T0 = Date.UTC(2026, 10, 26, 12, 0, 0)
const event = (i: number, overrides: Partial<NewEvent> = {}): NewEvent => ({
  key: `id:e${i}`, bodySha256: `h${i}`, orderKey: null, body: Buffer.from(`{"n":${i}}`), headers: [], source: '203.0.113.7', receivedAtMs: T0 + i, ...overrides,
})

for (const factory of factories) {
  t.test(`${factory.name}: events after a sequence number, in the order stored, whatever their delivery`, async (t) => {
    const open = await factory.make(t)
    const store = await open()
    t.equal(await store.lastEventSeq(), 0)
    t.same(await store.eventsAfter(0, 10), [])
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await store.intake(event(i))).id)
    t.equal((await store.intake(event(1))).kind, 'duplicate')
    const [leased] = await store.claimDue(T0 + 10, 1, 60_000)
    await store.settle(leased?.id as string, { atMs: T0 + 10, status: 200, error: null, durationMs: 1 }, { status: 'delivered' })
    const all = await store.eventsAfter(0, 10)
    t.same(all.map((e) => e.id), ids, 'each once, delivered ones included')
    t.same(all.map((e) => e.body.toString()), [0, 1, 2, 3, 4].map((i) => `{"n":${i}}`))
    t.same(all.map((e) => e.receivedAtMs), [0, 1, 2, 3, 4].map((i) => T0 + i))
    const seqs = all.map((e) => e.seq)
    t.same([...seqs].sort((a, b) => a - b), seqs, 'increasing')
    t.equal(await store.lastEventSeq(), seqs[4])
    t.same((await store.eventsAfter(seqs[1] as number, 2)).map((e) => e.id), ids.slice(2, 4), 'after the cursor, at most the limit')
    const again = await open()
    t.same((await again.eventsAfter(seqs[3] as number, 10)).map((e) => e.id), [ids[4]], 'after a restart')
    await again.removeSettledBefore(T0 + 1_000)
    t.notOk((await again.eventsAfter(0, 10)).some((e) => e.id === leased?.id), 'a removed event is gone')
    t.equal(await again.lastEventSeq(), seqs[4], 'and its number is not given again')
  })
}
