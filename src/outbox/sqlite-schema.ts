/**
 * An outbox's tables in its SQLite file (opened synced, in WAL: sqlite/open-database.ts, so the
 * inbox answers 200 only after a synced commit). Times are wall-clock Unix milliseconds; headers are JSON
 * text; bodies are BLOBs, byte for byte.
 *
 * `is_head` marks the earliest pending event of each order key, the only one of its key that may be
 * delivered (SPEC §10). It is kept by the store's writes rather than computed by the claim, so finding
 * due events reads only due events: a key with thousands waiting behind a retried head (the
 * application down for an hour) costs nothing per claim.
 */
import type Database from 'better-sqlite3'
import { migrate, type Migration } from '../sqlite/migrations.js'
import { openDatabase } from '../sqlite/open-database.js'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  key TEXT NOT NULL,
  body_sha256 TEXT NOT NULL,
  order_key TEXT,
  body BLOB NOT NULL,
  headers TEXT NOT NULL,
  source TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  conflict_with TEXT,
  is_head INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS events_key ON events (key);
CREATE INDEX IF NOT EXISTS events_order ON events (order_key, seq) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS events_status ON events (status, received_at);
CREATE TABLE IF NOT EXISTS attempts (
  event_id TEXT NOT NULL,
  at INTEGER NOT NULL,
  status INTEGER,
  error TEXT,
  duration_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_event ON attempts (event_id);
`

/** What a claim reads; its WHERE is repeated word for word by the claim, or SQLite will not use the index. */
const READY_CONDITION = 'status = \'pending\' AND (order_key IS NULL OR is_head = 1)'
const READY_INDEX = `CREATE INDEX IF NOT EXISTS events_ready ON events (next_attempt_at) WHERE ${READY_CONDITION}`
/**
 * The claim's query: due heads and unordered events, earliest first. Named index: with no statistics, the planner would
 * read every pending event by `events_status` and sort them.
 */
export const DUE_EVENTS = `SELECT seq, id, next_attempt_at FROM events INDEXED BY events_ready WHERE ${READY_CONDITION} AND next_attempt_at <= ? ORDER BY next_attempt_at, seq LIMIT ?`

/** Later events of an order key (not its head), by receipt: the claim reads those that have waited long enough. */
const WAITING_CONDITION = 'status = \'pending\' AND order_key IS NOT NULL AND is_head = 0'
const WAITING_INDEX = `CREATE INDEX IF NOT EXISTS events_waiting ON events (received_at, next_attempt_at) WHERE ${WAITING_CONDITION}`
/**
 * The claim's second query: later events received before `@waitedSince` and due, with the head they
 * wait behind. Their wait has ended (order-wait.ts); the rows the claim reads are those only.
 */
export const WAITED_EVENTS = `SELECT seq, id, received_at, next_attempt_at,
    (SELECT h.id FROM events h WHERE h.status = 'pending' AND h.order_key = w.order_key ORDER BY h.seq LIMIT 1) AS behind
  FROM events w INDEXED BY events_waiting WHERE ${WAITING_CONDITION} AND received_at <= @waitedSince AND next_attempt_at <= @now
  ORDER BY received_at LIMIT @limit`

/** Sets `is_head` on the earliest pending event of `@orderKey` and clears it everywhere else in that key. */
export const MARK_HEAD = `UPDATE events SET is_head = (seq = (SELECT min(seq) FROM events p WHERE p.status = 'pending' AND p.order_key = @orderKey))
  WHERE order_key = @orderKey AND status = 'pending' AND (is_head = 1 OR seq = (SELECT min(seq) FROM events p WHERE p.status = 'pending' AND p.order_key = @orderKey))`

/** In order, never renamed: the file records each (sqlite/migrations.ts). */
const MIGRATIONS: readonly Migration[] = [
  { id: '1-tables', up: (db) => { db.exec(SCHEMA) } },
  { id: '2-order-heads', up: markOrderHeads },
  { id: '3-claim-indexes', up: (db) => { db.exec(`${READY_INDEX}; ${WAITING_INDEX}`) } },
]

export async function openOutboxDatabase (path: string): Promise<Database.Database> {
  const db = await openDatabase(path)
  migrate(db, 'outbox', MIGRATIONS, path)
  return db
}

/** A file written before `is_head` existed: add it, mark every key's head, drop the claim's old index. */
function markOrderHeads (db: Database.Database): void {
  const columns = db.prepare('SELECT name FROM pragma_table_info(\'events\')').all() as Array<{ name: string }>
  if (columns.some((c) => c.name === 'is_head')) return
  db.exec(`ALTER TABLE events ADD COLUMN is_head INTEGER NOT NULL DEFAULT 0;
    UPDATE events SET is_head = 1 WHERE seq IN (SELECT min(seq) FROM events WHERE status = 'pending' AND order_key IS NOT NULL GROUP BY order_key);
    DROP INDEX IF EXISTS events_due;`)
}
