/**
 * The inbox's tables in its SQLite file (opened synced, in WAL: sqlite/open-database.ts, so intake
 * answers 200 only after a synced commit). Times are wall-clock Unix milliseconds; headers are JSON
 * text; bodies are BLOBs, byte for byte.
 */
import type Database from 'better-sqlite3'
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
  const db = await openDatabase(path)
  db.exec(SCHEMA)
  return db
}
