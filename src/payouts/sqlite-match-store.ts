/**
 * The MatchStore in the embedded SQLite file (PROXY_WEBHOOK_STORE_PATH), its own table beside the
 * payments'. One sidecar owns the file and better-sqlite3 is synchronous, so a claim's read and
 * write are one transaction that nothing in the process can come between. Like the payments'
 * writes, a claim's commit is not synced on its own (`synchronous = NORMAL`): a power loss may lose
 * the last moments' entries, which the payments' records those moments lost as well; and it never
 * checkpoints (the payments' connection does, once a second). Entries past
 * their time are pruned from the oldest, a few by each claim.
 */
import { migrate, type Migration } from '../sqlite/migrations.js'
import { openDatabase } from '../sqlite/open-database.js'
import { CLAIM_ANSWER_LIMIT, type MatchEntry, type MatchStore } from './match-store.js'

const MIGRATIONS: readonly Migration[] = [{
  id: '1-tables',
  up: (db) => {
    // Two b-trees a claim writes: the rows (in the order planned, so the oldest are pruned from the start) and the
    // index by match key. A row per payout planned within the window; no recipient is stored, only the key's hash.
    db.exec(`
CREATE TABLE IF NOT EXISTS payout_matches (
  match TEXT NOT NULL,
  at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  id TEXT NOT NULL,
  reference TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS payout_matches_match ON payout_matches (match, at);
`)
  },
}]

/** Each claim prunes up to this many expired rows: more than it adds, so the table never outgrows the window. */
const PRUNE_BATCH = 4

interface Row { id: string, at: number, reference: string }

export async function createSqliteMatchStore (path: string, nowMs: () => number): Promise<MatchStore> {
  const db = await openDatabase(path)
  // The payments' connection to the same file checkpoints its WAL once a second: a checkpoint within
  // a claim's commit (SQLite's default, past 1,000 pages) would sync the file on the request path.
  db.exec('PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0;')
  migrate(db, 'payouts', MIGRATIONS, path)
  const earlier = db.prepare<[string, number], Row>(`SELECT id, at, reference FROM payout_matches WHERE match = ? AND at >= ? ORDER BY at DESC LIMIT ${CLAIM_ANSWER_LIMIT}`)
  const insert = db.prepare<[string, string, number, number, string]>('INSERT INTO payout_matches (id, match, at, expires_at, reference) VALUES (?, ?, ?, ?, ?)')
  const remove = db.prepare<[string, string]>('DELETE FROM payout_matches WHERE match = ? AND id = ?')
  // Rows are planned in time order with one time to live, so the expired ones are the first rows.
  const prune = db.prepare<[number]>(`DELETE FROM payout_matches WHERE rowid IN (SELECT rowid FROM payout_matches ORDER BY rowid LIMIT ${PRUNE_BATCH}) AND expires_at < ?`)
  const claim = db.transaction((match: string, entry: MatchEntry, sinceMs: number, ttlMs: number): MatchEntry[] => {
    prune.run(nowMs())
    const found = earlier.all(match, sinceMs).map((row) => ({ id: row.id, reference: row.reference, atMs: row.at }))
    insert.run(entry.id, match, entry.atMs, entry.atMs + ttlMs, entry.reference)
    return found
  })
  let closed = false
  return {
    async claim (match, entry, sinceMs, ttlMs) {
      if (closed) throw new Error('the payout match store is closed')
      return claim.immediate(match, entry, sinceMs, ttlMs)
    },
    async remove (match, entry) {
      if (!closed) remove.run(match, entry.id)
    },
    async close () {
      if (closed) return
      closed = true
      db.close()
    },
  }
}
