/**
 * One suite for the console's SigninStore contract (SPEC §14), over each implementation on real
 * storage (an SQLite file, a real redis-server), reopened to stand for the sidecar after a
 * restart, the `console-link` command's process, or another replica.
 */
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRedisSigninStore } from '../../src/console/redis-signin-store.js'
import { USED_LINK_KEPT_MS, type SigninStore } from '../../src/console/signin-store.js'
import { createSqliteSigninStore } from '../../src/console/sqlite-signin-store.js'
import { captureLogger } from '../helpers/harness.js'
import { redisConnection, startRedis } from '../helpers/redis-server.js'

interface Factory { name: string, make: (t: Test) => Promise<() => Promise<SigninStore>> }

const factories: Factory[] = [{
  name: 'sqlite',
  async make (t) {
    const dir = mkdtempSync(join(tmpdir(), 'pap-console-'))
    t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
    return async () => {
      const store = await createSqliteSigninStore(join(dir, 'webhooks.db'))
      t.teardown(() => store.close())
      return store
    }
  },
}, {
  name: 'redis',
  async make (t) {
    const redis = await startRedis(t)
    return async () => {
      const store = await createRedisSigninStore({ redis: redisConnection(t, redis.url, 'test:'), log: captureLogger().logger })
      t.teardown(() => store.close())
      return store
    }
  },
}]

// Redis expires keys by its own clock: the times here are real ones.
const NOW = Date.now()
const MINUTE = 60_000

for (const factory of factories) {
  t.test(`${factory.name}: a link signs in once, in any process; its second use is told apart from a made-up one`, async (t) => {
    const open = await factory.make(t)
    const cli = await open()
    await cli.addLink('h1', 'ann@example.com', NOW + 10 * MINUTE, NOW)
    const [sidecar, replica] = [await open(), await open()]
    const outcomes = await Promise.all([sidecar.useLink('h1', NOW + MINUTE), replica.useLink('h1', NOW + MINUTE)])
    t.same(outcomes.map((o) => o.kind).sort(), ['signed-in', 'used'], 'of two uses at once, one signs in')
    t.same(await (await open()).useLink('h1', NOW + 2 * MINUTE), { kind: 'used', email: 'ann@example.com' }, 'after a restart too')
    t.same(await sidecar.useLink('h-unknown', NOW), { kind: 'unknown' })
  })

  t.test(`${factory.name}: a link past its 10 minutes is expired, and spent by trying it`, async (t) => {
    const store = await (await factory.make(t))()
    await store.addLink('h2', 'ann@example.com', NOW + 10 * MINUTE, NOW)
    t.same(await store.useLink('h2', NOW + 10 * MINUTE), { kind: 'expired', email: 'ann@example.com' })
    t.same(await store.useLink('h2', NOW + 10 * MINUTE), { kind: 'used', email: 'ann@example.com' })
  })

  t.test(`${factory.name}: a session lasts until its time, on every replica and after a restart, and ends when asked`, async (t) => {
    const open = await factory.make(t)
    const store = await open()
    const session = { email: 'ann@example.com', csrfSecret: 'csrf-1', expiresAtMs: NOW + 8 * 60 * MINUTE }
    await store.addSession('s1', session, NOW)
    const other = await open()
    t.same(await other.session('s1', NOW + MINUTE), session)
    t.equal(await other.session('s1', session.expiresAtMs), null, 'not at its expiry')
    t.equal(await other.session('s-unknown', NOW), null)
    await other.endSession('s1')
    t.equal(await store.session('s1', NOW + MINUTE), null, 'ended for every replica')
  })
}

t.test('sqlite: links and sessions past their time go when new ones are added, used links after a day', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pap-console-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const store = await createSqliteSigninStore(join(dir, 'webhooks.db'))
  t.teardown(() => store.close())
  await store.addLink('old', 'ann@example.com', 1_000, 0)
  await store.addSession('old', { email: 'ann@example.com', csrfSecret: 'c', expiresAtMs: 1_000 }, 0)
  await store.addLink('new', 'ann@example.com', 1_000 + USED_LINK_KEPT_MS + 10 * MINUTE, 1_000 + USED_LINK_KEPT_MS)
  await store.addSession('new', { email: 'ann@example.com', csrfSecret: 'c', expiresAtMs: 1_000 + 10 * MINUTE }, 2_000)
  t.same(await store.useLink('old', 0), { kind: 'unknown' }, 'a link a day past its expiry is gone')
  t.equal(await store.session('old', 0), null, 'a session past its expiry is gone')
})
