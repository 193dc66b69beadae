/**
 * The MatchStore in the embedded SQLite file (PROXY_WEBHOOK_STORE_PATH), its own table beside the
 * payments'. One sidecar owns the file and better-sqlite3 is synchronous, so a claim's read and
 * write are one transaction that nothing in the process can come between. Like the payments'
 * writes, a claim's commit is not synced on its own (`synchronous = NORMAL`): a power loss may lose
 * the last moments' entries, which the payments' records those moments lost as well. Entries past
 * their time are pruned once a minute, in one statement over the index.
 */
import { migrate, type Migration } from '../sqlite/migrations.js'
import { openDatabase } from '../sqlite/open-database.js'
import { CLAIM_ANSWER_LIMIT, type MatchEntry, type MatchStore } from './match-store.js'

const MIGRATIONS: readonly Migration[] = [{
  id: '1-tables',
  up: (db) => {
    db.exec(`
CREATE TABLE IF NOT EXISTS payout_matches (
  id TEXT PRIMARY KEY,
  match TEXT NOT NULL,
  at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  reference TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS payout_matches_match ON payout_matches (match, at);
CREATE INDEX IF NOT EXISTS payout_matches_expiry ON payout_matches (expires_at);
`)
  },
}]

const PRUNE_INTERVAL_MS = 60_000

interface Row { id: string, at: number, reference: string }

export async function createSqliteMatchStore (path: string, nowMs: () => number): Promise<MatchStore> {
  const db = await openDatabase(path)
  db.exec('PRAGMA synchronous = NORMAL;')
  migrate(db, 'payouts', MIGRATIONS, path)
  const earlier = db.prepare<[string, number], Row>(`SELECT id, at, reference FROM payout_matches WHERE match = ? AND at >= ? ORDER BY at DESC LIMIT ${CLAIM_ANSWER_LIMIT}`)
  const insert = db.prepare<[string, string, number, number, string]>('INSERT OR REPLACE INTO payout_matches (id, match, at, expires_at, reference) VALUES (?, ?, ?, ?, ?)')
  const remove = db.prepare<[string, string]>('DELETE FROM payout_matches WHERE id = ? AND match = ?')
  const prune = db.prepare<[number]>('DELETE FROM payout_matches WHERE expires_at < ?')
  const claim = db.transaction((match: string, entry: MatchEntry, sinceMs: number, ttlMs: number): MatchEntry[] => {
    const found = earlier.all(match, sinceMs).map((row) => ({ id: row.id, reference: row.reference, atMs: row.at }))
    insert.run(entry.id, match, entry.atMs, entry.atMs + ttlMs, entry.reference)
    return found
  })
  let prunedAtMs = 0
  let closed = false
  return {
    async claim (match, entry, sinceMs, ttlMs) {
      if (closed) throw new Error('the payout match store is closed')
      const now = nowMs()
      if (now - prunedAtMs >= PRUNE_INTERVAL_MS) {
        prunedAtMs = now
        prune.run(now)
      }
      return claim.immediate(match, entry, sinceMs, ttlMs)
    },
    async remove (match, entry) {
      if (!closed) remove.run(entry.id, match)
    },
    async close () {
      if (closed) return
      closed = true
      db.close()
    },
  }
}
