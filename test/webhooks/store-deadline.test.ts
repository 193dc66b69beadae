/**
 * The inbox's SQLite store and its deadline (src/sqlite/sqlite-thread.ts): an answer that reached the
 * inbox's thread while its loop was held past the deadline (a burst parsed, the thread starved of
 * the CPU at its lower priority) is taken, not failed: the event it stored is answered 200, not 503.
 */
import t from 'tap'
import Database from 'better-sqlite3'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { createSqliteStore } from '../../src/outbox/sqlite-store.js'
import { captureLogger } from '../helpers/harness.js'
import { tempDir } from '../helpers/temp-dir.js'

const nextImmediate = async (): Promise<void> => { await new Promise((resolve) => { setImmediate(resolve) }) }

t.test('the SQLite store: a write answered while the loop was held past the deadline is stored, not failed', async (t) => {
  const path = join(tempDir(t), 'webhooks.db')
  const deadlineMs = 200
  const store = await createSqliteStore({ path, log: captureLogger().logger, deadlineMs, retentionMs: 86_400_000, maxEvents: 100, maxBytes: 1 << 20, orderMaxWaitMs: 86_400_000 })
  t.teardown(() => store.close())
  const body = Buffer.from('{"id":"evt_held"}')
  const intake = store.intake({ key: 'evt_held', bodySha256: createHash('sha256').update(body).digest('hex'), orderKey: null, body, headers: [], source: '127.0.0.1', receivedAtMs: Date.now() })
  // The write has gone to the thread (sent at the end of the turn it was made in).
  await nextImmediate()
  const reader = new Database(path, { readonly: true })
  t.teardown(() => reader.close())
  // The loop held, as a starved or busy inbox thread's is, until the store's thread has committed
  // the write, then for five deadlines more: its answer waits, unread, and the deadline has passed.
  const committed = (): boolean => (reader.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n === 1
  while (!committed()) { /* held */ }
  const committedAt = performance.now()
  while (performance.now() - committedAt < 5 * deadlineMs) { /* held */ }
  const outcome = await intake
  t.equal(outcome.kind, 'stored', 'the answer that had arrived was read before the deadline was judged')
  t.ok(store.ready(), 'and the store is ready')
})
