/**
 * Opens the inbox's SQLite file: WAL (readers and the operator commands never block intake) with
 * `synchronous=FULL`, so a commit is synced before intake answers 200 (SPEC §10: power loss
 * included). Times are wall-clock Unix milliseconds; headers are JSON text; bodies are BLOBs, byte for byte.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import type Database from 'better-sqlite3'

/** Another process (a `webhooks replay`) may hold the write lock briefly: wait rather than fail. */
const BUSY_TIMEOUT_MS = 2000

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
  conflict_with TEXT
);
CREATE INDEX IF NOT EXISTS events_key ON events (key);
CREATE INDEX IF NOT EXISTS events_due ON events (next_attempt_at) WHERE status = 'pending';
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

export async function openInboxDatabase (path: string): Promise<Database.Database> {
  const Driver = await loadDriver()
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Driver(path)
  // exec, not pragma(): no statement object is left for the garbage collector.
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;`)
  db.exec(SCHEMA)
  return db
}

/**
 * better-sqlite3 12 wraps its objects in Node's ObjectWrap, whose destructor aborts the process on
 * Node 24 when the garbage collector frees a statement at the wrong moment (Assertion failed: (env)
 * != nullptr; WiseLibs/better-sqlite3#1515, closed without a fix; seen here in the delivery tests on
 * Node 24). 13 uses Node-API and ships prebuilt binaries, but needs Node 22 and crashes on 20. So
 * each Node gets the one that works on it; both are dependencies, external to the bundle.
 */
async function loadDriver (): Promise<typeof Database> {
  const major = Number(process.versions.node.split('.')[0])
  return major >= 22 ? (await import('better-sqlite3-13')).default : (await import('better-sqlite3')).default
}
