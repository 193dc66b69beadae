/**
 * An outbox's SQLite file: the claim reads due events from their own index (a backlog behind a
 * retried head costs it nothing), and a file written by the first schema, before `is_head`, is
 * upgraded in place with its pending events delivered in the same order.
 */
import t from 'tap'
import { join } from 'node:path'
import { openDatabase } from '../../src/sqlite/open-database.js'
import { DUE_EVENTS, openOutboxDatabase, WAITED_EVENTS } from '../../src/outbox/sqlite-schema.js'
import { createSqliteStore } from '../../src/outbox/sqlite-store.js'
import { captureLogger } from '../helpers/harness.js'
import { tempDir } from '../helpers/temp-dir.js'

t.test('the claim\'s query is one index range, in order, with no table scan and no sort', async (t) => {
  const db = await openOutboxDatabase(join(tempDir(t), 'plan.db'))
  t.teardown(() => db.close())
  const plan = (db.prepare(`EXPLAIN QUERY PLAN ${DUE_EVENTS}`).all(0, 10) as Array<{ detail: string }>).map((row) => row.detail)
  t.same(plan, ['SEARCH events USING INDEX events_ready (next_attempt_at<?)'])
  const waited = (db.prepare(`EXPLAIN QUERY PLAN ${WAITED_EVENTS}`).all({ waitedSince: 0, now: 0, limit: 10 }) as Array<{ detail: string }>).map((row) => row.detail)
  t.same(waited, ['SEARCH w USING INDEX events_waiting (received_at<?)', 'CORRELATED SCALAR SUBQUERY 1', 'SEARCH h USING INDEX events_order (order_key=?)'],
    'the later events that have waited, from their own index by receipt; their head by the order index')
})

/** The tables as the first release of the inbox wrote them. */
const FIRST_SCHEMA = `
CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, key TEXT NOT NULL, body_sha256 TEXT NOT NULL,
  order_key TEXT, body BLOB NOT NULL, headers TEXT NOT NULL, source TEXT NOT NULL, received_at INTEGER NOT NULL, status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at INTEGER NOT NULL, conflict_with TEXT);
CREATE INDEX events_key ON events (key);
CREATE INDEX events_due ON events (next_attempt_at) WHERE status = 'pending';
CREATE INDEX events_order ON events (order_key, seq) WHERE status = 'pending';
CREATE INDEX events_status ON events (status, received_at);
CREATE TABLE attempts (event_id TEXT NOT NULL, at INTEGER NOT NULL, status INTEGER, error TEXT, duration_ms INTEGER NOT NULL);
CREATE INDEX attempts_event ON attempts (event_id);
`

t.test('a file of the first schema is upgraded: each key\'s earliest pending event is its head, and the order holds', async (t) => {
  const path = join(tempDir(t), 'first.db')
  const old = await openDatabase(path)
  old.exec(FIRST_SCHEMA)
  const insert = old.prepare(`INSERT INTO events (id, key, body_sha256, order_key, body, headers, source, received_at, status, next_attempt_at)
    VALUES (?, ?, 'h', ?, x'7b7d', '[]', '203.0.113.7', 1000, ?, 1000)`)
  const rows: Array<[string, string | null, string]> = [
    ['msg_a1', 'pay_A', 'delivered'], ['msg_a2', 'pay_A', 'pending'], ['msg_a3', 'pay_A', 'pending'],
    ['msg_b1', 'pay_B', 'pending'], ['msg_free', null, 'pending'], ['msg_gone', null, 'failed'],
  ]
  for (const [id, orderKey, status] of rows) insert.run(id, `id:${id}`, orderKey, status)
  old.close()

  const store = await createSqliteStore({ path, log: captureLogger().logger, retentionMs: 86_400_000, maxEvents: 100, maxBytes: 1 << 20, orderMaxWaitMs: 3_600_000 })
  t.teardown(() => store.close())
  const claim = async (): Promise<string[]> => (await store.claimDue(2000, 10, 60_000)).map((e) => e.id).sort()
  t.same(await claim(), ['msg_a2', 'msg_b1', 'msg_free'], 'the heads of pay_A and pay_B and the unordered event')
  await store.settle('msg_a2', { atMs: 2000, status: 200, error: null, durationMs: 1 }, { status: 'delivered' })
  t.same(await claim(), ['msg_a3'], 'then the next of pay_A')
  t.same((await store.list({})).map((e) => e.id), rows.map(([id]) => id), 'nothing lost in the upgrade')

  const db = await openDatabase(path)
  t.teardown(() => db.close())
  t.same(db.prepare('SELECT name FROM sqlite_master WHERE type = \'index\' AND name = \'events_due\'').all(), [], 'the old claim index is gone')
})
