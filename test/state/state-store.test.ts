/**
 * One suite, two factories: every StateStore rule is checked against the memory store (fake clock)
 * and a real redis-server (real time, short TTLs), the way lru-cache tests its modes.
 */
import t, { type Test } from 'tap'
import { Redis } from 'ioredis'
import { createMemoryStore } from '../../src/state/memory-store.js'
import { createRedisStore } from '../../src/state/redis-store.js'
import type { IdempotencyRecord, StateStore } from '../../src/state/state-store.js'
import type { StoreObserver } from '../../src/state/store-metrics.js'
import { StateUnavailableError } from '../../src/errors.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { captureLogger, type LogCapture } from '../helpers/harness.js'
import { eventually, HANG_MS } from '../helpers/eventually.js'
import { redisConnection, startRedis, stallProbe, type RedisServer } from '../helpers/redis-server.js'

interface Made { store: StateStore, advance: (ms: number) => Promise<void> }
interface Factory { name: string, make: (t: Test) => Promise<Made> }

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** A real redis-server and a Redis store connected to it, closed at teardown. */
/**
 * The store's own observer (its `state_store_up` gauge), counting each time the store is told its
 * connection is down: every reconnect attempt that fails tells it twice (the error, the close), so
 * a count that has grown by two more is one more attempt made and judged.
 */
function connectionFailures (): { observer: StoreObserver, count: () => number } {
  let count = 0
  return { observer: { up: (_kind, up) => { if (!up) count++ }, command () {}, error () {} }, count: () => count }
}

/** Resolves once the store has been told of `attempts` more failed reconnect attempts (see above). */
async function afterReconnects (failures: () => number, attempts: number): Promise<void> {
  const from = failures()
  await eventually(() => failures() >= from + 2 * attempts, { what: `${attempts} more reconnect attempts`, timeoutMs: HANG_MS })
}

async function readyRedisStore (t: Test): Promise<{ redis: RedisServer, store: StateStore, logs: LogCapture, failures: () => number }> {
  const redis = await startRedis(t)
  const { logger, logs } = captureLogger()
  const failures = connectionFailures()
  const store = createRedisStore({ redis: redisConnection(t, redis.url, 'test:'), log: logger, observer: failures.observer })
  t.teardown(() => store.close())
  await eventually(() => store.status().ready)
  return { redis, store, logs, failures: failures.count }
}

const factories: Factory[] = [
  {
    name: 'memory',
    async make () {
      const clock = new FakeClock()
      return { store: createMemoryStore({ clock }), advance: (ms) => clock.advance(ms) }
    },
  },
  {
    name: 'redis',
    async make (t) {
      const { store } = await readyRedisStore(t)
      return { store, advance: sleep }
    },
  },
]

const record = (fingerprint: string, body = '{"ok":true}'): IdempotencyRecord => ({
  fingerprint, status: 201, headers: { 'content-type': 'application/json', 'set-thing': ['a', 'b'], 'x-latin1': 'caf\u00e9 "\\ ' }, body: Buffer.from(body),
})

for (const factory of factories) {
  t.test(`${factory.name} store`, async (t) => {
    t.test('a claim marks the key in flight until finished, then replays the record', async (t) => {
      const { store } = await factory.make(t)
      const first = await store.claim('k1', 60_000)
      t.equal(first.kind, 'claimed')
      t.same(await store.claim('k1', 60_000), { kind: 'in-flight' }, 'a second claim sees the mark')
      if (first.kind !== 'claimed') return
      // Every byte value, and invalid UTF-8: the body is bytes, whatever the store keeps it as.
      const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => 255 - i))
      await store.finish('k1', first.owner, { ...record('fp'), body: binary }, 60_000)
      const again = await store.claim('k1', 60_000)
      t.equal(again.kind, 'recorded')
      if (again.kind !== 'recorded') return
      t.equal(again.record.fingerprint, 'fp')
      t.equal(again.record.status, 201)
      t.same(again.record.headers, { 'content-type': 'application/json', 'set-thing': ['a', 'b'], 'x-latin1': 'caf\u00e9 "\\ ' }, 'headers as sent, latin1 and quotes included')
      t.ok(again.record.body.equals(binary), 'the body bytes survive')
      binary.fill(0)
      const later = await store.claim('k1', 60_000)
      t.ok(later.kind === 'recorded' && later.record.body[0] === 255, 'a later write to the caller\'s buffer does not change the record')
    })

    t.test('finish and abort by another owner leave the mark alone', async (t) => {
      const { store } = await factory.make(t)
      const first = await store.claim('k2', 60_000)
      if (first.kind !== 'claimed') { t.fail('not claimed'); return }
      await store.finish('k2', 'someone-else', record('fp'), 60_000)
      await store.abort('k2', 'someone-else')
      t.same(await store.claim('k2', 60_000), { kind: 'in-flight' })
      await store.abort('k2', first.owner)
      t.equal((await store.claim('k2', 60_000)).kind, 'claimed', 'the owner’s abort frees the key')
    })

    t.test('an in-flight mark expires on its own, and a late finish by its owner is ignored', async (t) => {
      const { store, advance } = await factory.make(t)
      const first = await store.claim('k3', 100)
      if (first.kind !== 'claimed') { t.fail('not claimed'); return }
      await advance(250)
      const second = await store.claim('k3', 60_000)
      t.equal(second.kind, 'claimed', 'a crashed owner never blocks the key')
      await store.finish('k3', first.owner, record('stale'), 60_000)
      t.same(await store.claim('k3', 60_000), { kind: 'in-flight' }, 'the new owner’s mark is kept')
    })

    t.test('a record expires after its TTL', async (t) => {
      const { store, advance } = await factory.make(t)
      const first = await store.claim('k4', 60_000)
      if (first.kind !== 'claimed') { t.fail('not claimed'); return }
      await store.finish('k4', first.owner, record('fp'), 100)
      await advance(250)
      t.equal((await store.claim('k4', 60_000)).kind, 'claimed')
    })

    t.test('a key marked held says so in its claims until the mark expires, and the mark touches nothing else', async (t) => {
      const { store, advance } = await factory.make(t)
      const plain = await store.claim('plain', 60_000)
      t.ok(plain.kind === 'claimed' && !plain.held, 'a key never marked: not held')
      await store.markHeld('h1', 250)
      const first = await store.claim('h1', 60_000)
      t.ok(first.kind === 'claimed' && first.held, 'a marked key: claimed, and held')
      t.same(await store.claim('h1', 60_000), { kind: 'in-flight' }, 'the mark does not stand in for an in-flight one')
      if (first.kind !== 'claimed') return
      await store.abort('h1', first.owner)
      const again = await store.claim('h1', 60_000)
      t.ok(again.kind === 'claimed' && again.held, 'an abort leaves the held mark')
      if (again.kind !== 'claimed') return
      await store.finish('h1', again.owner, record('fp'), 60_000)
      t.equal((await store.claim('h1', 60_000)).kind, 'recorded', 'a record still answers first')
      const other = await store.claim('h2', 60_000)
      t.ok(other.kind === 'claimed' && !other.held, 'another key is not held')
      if (other.kind !== 'claimed') return
      await store.markHeld('h2', 250)
      t.same(await store.claim('h2', 60_000), { kind: 'in-flight' }, 'marking a key in flight leaves its claim in place')
      await store.abort('h2', other.owner)
      await advance(400)
      const expired = await store.claim('h2', 60_000)
      t.ok(expired.kind === 'claimed' && !expired.held, 'past its TTL the mark is gone')
    })

    t.test('20 concurrent reservations never overshoot the limit', async (t) => {
      const { store } = await factory.make(t)
      const results = await Promise.all(Array.from({ length: 20 }, () => store.reserve('day', 100n, 500n, 60_000)))
      t.equal(results.filter(Boolean).length, 5)
      t.equal(await store.reserve('day', 1n, 500n, 60_000), false, 'the total is at the limit')
      await store.release('day', 100n)
      t.equal(await store.reserve('day', 100n, 500n, 60_000), true, 'a released amount can be reserved again')
      t.equal(await store.reserve('day', 1n, 500n, 60_000), false)
    })

    t.test('day totals are exact in minor units beyond 2^53', async (t) => {
      const { store } = await factory.make(t)
      // "0.1" + "0.2" against "0.3" in minor units: exact, no float drift.
      t.equal(await store.reserve('cents', 10n, 30n, 60_000), true)
      t.equal(await store.reserve('cents', 20n, 30n, 60_000), true)
      t.equal(await store.reserve('cents', 1n, 30n, 60_000), false)
      const limit = 2n ** 62n + 1n
      t.equal(await store.reserve('big', 2n ** 62n, limit, 60_000), true)
      t.equal(await store.reserve('big', 1n, limit, 60_000), true, 'a total one below the limit still admits one unit')
      t.equal(await store.reserve('big', 1n, limit, 60_000), false, 'one unit over is refused (a double would round it away)')
      t.equal(await store.reserve('big2', limit + 1n, limit, 60_000), false, 'an amount over the limit alone')
    })

    t.test('release never takes a total below zero', async (t) => {
      const { store } = await factory.make(t)
      t.equal(await store.reserve('r', 10n, 10n, 60_000), true)
      await store.release('r', 50n)
      await store.release('missing', 5n)
      t.equal(await store.reserve('r', 10n, 10n, 60_000), true)
      t.equal(await store.reserve('r', 1n, 10n, 60_000), false)
    })

    t.test('an amount given back under a name is given back once, however many times and from however many callers at once', async (t) => {
      const { store } = await factory.make(t)
      t.equal(await store.reserve('d', 300n, 1000n, 60_000), true)
      t.equal(await store.reserve('d', 200n, 1000n, 60_000), true)
      await Promise.all(Array.from({ length: 10 }, async () => { await store.release('d', 300n, 'apr:a:d') }))
      await store.release('d', 300n, 'apr:a:d')
      t.equal(await store.reserve('d', 800n, 1000n, 60_000), true, '300 came back once: 200 + 800 fits')
      t.equal(await store.reserve('d', 1n, 1000n, 60_000), false, 'and not twice')
      await store.release('d', 200n, 'apr:b:d')
      t.equal(await store.reserve('d', 200n, 1000n, 60_000), true, 'another name gives back its own amount')
      await store.release('gone', 5n, 'apr:c:gone')
      t.equal(await store.reserve('gone', 5n, 5n, 60_000), true, 'a total that does not exist is not created by a giving-back')
    })

    t.test('the rate window admits the limit, then says when the next is admitted', async (t) => {
      const { store, advance } = await factory.make(t)
      for (let i = 0; i < 3; i++) t.same(await store.hit('caller', 3, 300), { admitted: true, retryAfterMs: 0 })
      const refused = await store.hit('caller', 3, 300)
      t.equal(refused.admitted, false)
      t.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= 300, `retryAfterMs ${refused.retryAfterMs} within the window`)
      t.equal((await store.hit('other', 3, 300)).admitted, true, 'windows are per key')
      await advance(350)
      t.equal((await store.hit('caller', 3, 300)).admitted, true, 'the window slid')
    })

    t.test('status and ping', async (t) => {
      const { store } = await factory.make(t)
      t.same(store.status(), { kind: factory.name, ready: true })
      await store.ping()
    })
  })
}

t.test('memory store: a long run of hits keeps the window exact while the log compacts', async (t) => {
  const clock = new FakeClock()
  const store = createMemoryStore({ clock })
  const admitted: number[] = []
  for (let i = 0; i < 10_000; i++) {
    if ((await store.hit('busy', 100, 1000)).admitted) admitted.push(clock.monotonicMs())
    await clock.advance(5)
  }
  // Admitted times are sorted: the 101st before any admitted time must lie outside its window.
  const overfull = admitted.filter((at, i) => i >= 100 && (admitted[i - 100] ?? -Infinity) > at - 1000)
  t.same(overfull, [], 'never more than 100 admitted within any 1 s')
  t.ok(admitted.length >= 4_900 && admitted.length <= 5_100, `about 100 a second over 50 s (${admitted.length})`)
})

t.test('memory store: rate windows and day totals are bounded by count, the least recently used forgotten first', async (t) => {
  const store = createMemoryStore({ clock: new FakeClock(), maxCounterKeys: 3 })
  for (const key of ['a', 'b', 'c', 'd']) t.equal((await store.hit(key, 1, 60_000)).admitted, true, `${key}: first hit`)
  t.equal((await store.hit('d', 1, 60_000)).admitted, false, 'd: kept, so its limit holds')
  t.equal((await store.hit('a', 1, 60_000)).admitted, true, 'a: the fourth key pushed it out')
  for (const key of ['x', 'y', 'z', 'w']) t.equal(await store.reserve(key, 5n, 5n, 60_000), true, `${key}: first reservation`)
  t.equal(await store.reserve('w', 1n, 5n, 60_000), false, 'w: kept, so its total holds')
  t.equal(await store.reserve('x', 5n, 5n, 60_000), true, 'x: forgotten past the bound')
})

t.test('memory store: an answer past the byte bound is not kept, and its mark is dropped so a retry is forwarded', async (t) => {
  const store = createMemoryStore({ clock: new FakeClock(), maxRecordBytes: 4096 })
  const claimed = await store.claim('big', 60_000)
  if (claimed.kind !== 'claimed') throw new Error(`expected a claim, got ${claimed.kind}`)
  await store.finish('big', claimed.owner, { fingerprint: 'fp', status: 200, headers: {}, body: Buffer.alloc(8192) }, 60_000)
  t.equal((await store.claim('big', 60_000)).kind, 'claimed', 'neither recorded nor in flight')

  const small = await store.claim('small', 60_000)
  if (small.kind !== 'claimed') throw new Error(`expected a claim, got ${small.kind}`)
  await store.finish('small', small.owner, { fingerprint: 'fp', status: 200, headers: {}, body: Buffer.alloc(100) }, 60_000)
  t.equal((await store.claim('small', 60_000)).kind, 'recorded', 'an answer within the bound is recorded')
})

t.test('memory store: records filling the byte bound never push out a mark still in flight', async (t) => {
  // A payout waiting on a slow provider while other transactions are recorded: its mark is the
  // least recently used entry, and a duplicate must still be held back.
  const store = createMemoryStore({ clock: new FakeClock(), maxRecordBytes: 16 * 1024 })
  const slow = await store.claim('slow', 60_000)
  if (slow.kind !== 'claimed') throw new Error(`expected a claim, got ${slow.kind}`)
  for (let i = 0; i < 50; i++) {
    const other = await store.claim(`other-${i}`, 60_000)
    if (other.kind !== 'claimed') throw new Error(`expected a claim, got ${other.kind}`)
    await store.finish(`other-${i}`, other.owner, { fingerprint: 'fp', status: 200, headers: {}, body: Buffer.alloc(1024) }, 60_000)
  }
  t.equal((await store.claim('other-0', 60_000)).kind, 'claimed', 'the oldest records went to make room')
  t.equal((await store.claim('slow', 60_000)).kind, 'in-flight', 'the mark did not')
  await store.finish('slow', slow.owner, { fingerprint: 'fp', status: 200, headers: {}, body: Buffer.alloc(100) }, 60_000)
  t.equal((await store.claim('slow', 60_000)).kind, 'recorded', 'and its answer is recorded when it comes')
})

t.test('memory store: past the in-flight bound a claim is refused, never a mark evicted', async (t) => {
  const clock = new FakeClock()
  const store = createMemoryStore({ clock, maxInFlightMarks: 3 })
  const owners: string[] = []
  for (const key of ['a', 'b', 'c']) {
    const claimed = await store.claim(key, 10_000)
    if (claimed.kind !== 'claimed') throw new Error(`expected a claim, got ${claimed.kind}`)
    owners.push(claimed.owner)
  }
  await t.rejects(store.claim('d', 10_000), StateUnavailableError, 'a fourth transaction waits (503) rather than push a mark out')
  for (const key of ['a', 'b', 'c']) t.equal((await store.claim(key, 10_000)).kind, 'in-flight', `${key}: still held back`)
  await store.abort('a', owners[0] as string)
  t.equal((await store.claim('d', 10_000)).kind, 'claimed', 'a mark dropped makes room')
  await clock.advance(10_001)
  t.equal((await store.claim('e', 10_000)).kind, 'claimed', 'and so do marks that expired')
})

t.test('memory store: past the held bound a mark is refused, never one evicted', async (t) => {
  const clock = new FakeClock()
  const store = createMemoryStore({ clock, maxHeldMarks: 2 })
  await store.markHeld('a', 10_000)
  await store.markHeld('b', 20_000)
  await t.rejects(store.markHeld('c', 10_000), StateUnavailableError, 'a third hold waits (503) rather than push a mark out')
  await store.markHeld('a', 10_000)
  t.pass('marking a key already marked needs no room')
  for (const key of ['a', 'b']) {
    const claimed = await store.claim(key, 1000)
    t.ok(claimed.kind === 'claimed' && claimed.held, `${key}: still marked`)
  }
  await clock.advance(10_001)
  await store.markHeld('c', 10_000)
  const c = await store.claim('c', 1000)
  t.ok(c.kind === 'claimed' && c.held, 'a mark that expired makes room')
})

t.test('redis store: down means StateUnavailableError promptly, logged once, and recovery is automatic', async (t) => {
  const { redis, store, logs, failures } = await readyRedisStore(t)
  await redis.stop()
  const started = Date.now()
  for (let i = 0; i < 5; i++) {
    await t.rejects(store.claim(`down-${i}`, 60_000), StateUnavailableError)
    await t.rejects(store.reserve('d', 1n, 10n, 60_000), StateUnavailableError)
    await t.rejects(store.hit('h', 1, 1000), StateUnavailableError)
  }
  t.ok(Date.now() - started < 2000, 'every refusal came within the SPEC’s 2 s')
  // Commands on a socket that is no longer writable fail at once, before ioredis has heard the close.
  await eventually(() => !store.status().ready, { what: 'the store to report the outage' })
  // ioredis tries again at most a second apart: two more attempts failed, each a chance to log the outage again.
  await afterReconnects(failures, 2)
  t.equal(logs.find('state store unavailable').length, 1, 'one error line per outage, not per request or reconnect')
  await redis.start()
  await eventually(() => store.status().ready, { what: 'the store to be ready again', timeoutMs: HANG_MS })
  t.equal((await store.claim('back', 60_000)).kind, 'claimed')
  t.equal(logs.find('state store recovered').length, 1)
})

t.test('redis store: a command that hangs fails within about a second', async (t) => {
  const { redis, store, logs } = await readyRedisStore(t)
  const admin = adminClient(t, redis.url)
  await admin.ping()
  // DEBUG SLEEP blocks the server, as a stuck or overloaded Redis would. The claim is sent once a
  // probe's PING goes unanswered, so a loaded machine cannot send it before the sleep began; the
  // probe connects first, as a connection made during the sleep waits for its end.
  const probe = await stallProbe(t, redis.url)
  const blocked = admin.call('DEBUG', 'SLEEP', '5').catch(() => null)
  await probe.untilBlocked()
  const started = Date.now()
  await t.rejects(store.claim('slow', 60_000), StateUnavailableError)
  t.ok(Date.now() - started < 2000, 'refused within 2 s')
  t.equal(store.status().ready, false, 'the connection is up, but a store that does not answer is not ready')
  await blocked
  await eventually(() => store.status().ready, { what: 'the store to see the server answer again, with no request to ask', timeoutMs: HANG_MS })
  t.equal((await store.claim('after-stall', 60_000)).kind, 'claimed', 'answers again once the server does')
  t.equal(logs.find('state store unavailable').length, 1)
  t.equal(logs.find('state store recovered').length, 1, 'the stall ended with the first answer')
})

t.test('redis store: the password and the secrets never reach logs or keys', async (t) => {
  const password = 'redis-pass-Zq81-marker'
  const redis = await startRedis(t, { password })
  const { logger, logs } = captureLogger()
  const failures = connectionFailures()
  const store = createRedisStore({ redis: redisConnection(t, redis.url, 'pap:'), log: logger, observer: failures.observer })
  t.teardown(() => store.close())
  await eventually(() => store.status().ready)
  const claim = await store.claim('caller:sandbox:fiat:POST:/payouts:hash', 60_000)
  if (claim.kind === 'claimed') await store.finish('caller:sandbox:fiat:POST:/payouts:hash', claim.owner, record('fp'), 60_000)
  await store.hit('caller', 5, 1000)
  await store.reserve('caller:0:KES', 5n, 10n, 60_000)
  const admin = adminClient(t, redis.url)
  const keys = await admin.keys('*')
  t.same(keys.sort(), ['pap:d:caller:0:KES', 'pap:i:caller:sandbox:fiat:POST:/payouts:hash', 'pap:r:caller'], 'every key carries the prefix and a kind')
  await redis.stop()
  await t.rejects(store.ping(), StateUnavailableError)
  // A reconnect attempt refused: its library error (which names the address) was handled.
  await afterReconnects(failures.count, 1)
  await redis.start()
  await eventually(() => store.status().ready, { what: 'the store to be ready again', timeoutMs: HANG_MS })
  const text = logs.lines.join('\n')
  t.ok(logs.find('state store unavailable').length >= 1, 'the outage was logged')
  t.notMatch(text, password, 'no log line holds the password')
  t.notMatch(text, `127.0.0.1:${redis.port}`, 'no log line holds the address from a library message')
})

t.test('redis store: a wrong password is an outage, not a crash', async (t) => {
  const redis = await startRedis(t, { password: 'right-Zq81' })
  const { logger, logs } = captureLogger()
  const failures = connectionFailures()
  const store = createRedisStore({ redis: redisConnection(t, `redis://:wrong-Zq81@127.0.0.1:${redis.port}`, 'pap:'), log: logger, observer: failures.observer })
  t.teardown(() => store.close())
  // Redis answered the wrong password, and the attempt after it was refused too.
  await eventually(() => store.status().refusal !== undefined, { what: 'the refusal', timeoutMs: HANG_MS })
  await afterReconnects(failures.count, 1)
  t.equal(store.status().ready, false)
  await t.rejects(store.claim('x', 1000), StateUnavailableError)
  t.notMatch(logs.lines.join('\n'), 'wrong-Zq81')
})

/** A plain client for looking at what the store wrote; its errors (Redis stopped on purpose) are expected. */
function adminClient (t: Test, url: string): Redis {
  const admin = new Redis(url)
  admin.on('error', () => {})
  t.teardown(() => admin.disconnect())
  return admin
}

t.test('two Redis stores (two replicas) share one day total, one rate window and one set of claims', async (t) => {
  const redis = await startRedis(t)
  const { logger } = captureLogger()
  const stores = [0, 1].map(() => createRedisStore({ redis: redisConnection(t, redis.url, 'pap:'), log: logger }))
  for (const store of stores) t.teardown(() => store.close())
  await eventually(() => stores.every((s) => s.status().ready))
  const [a, b] = stores as [StateStore, StateStore]
  const reserved = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).reserve('payout-agent:0:KES', 100n, 500n, 60_000)))
  t.equal(reserved.filter(Boolean).length, 5, '20 reservations across two replicas, a limit that admits 5: exactly 5')
  const hits = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).hit('payout-agent', 4, 60_000)))
  t.equal(hits.filter((h) => h.admitted).length, 4, 'one rate window for both')
  const claims = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).claim('same-key', 60_000)))
  t.equal(claims.filter((c) => c.kind === 'claimed').length, 1, 'one claim wins across replicas')
  await a.markHeld('held-key', 60_000)
  const held = await b.claim('held-key', 60_000)
  t.ok(held.kind === 'claimed' && held.held, 'a key one replica marked held is held for the other')
})
