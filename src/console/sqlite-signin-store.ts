/**
 * The SigninStore in the sidecar's SQLite file (PROXY_WEBHOOK_STORE_PATH), beside approvals: WAL and
 * synced commits, so a link taken is taken for good, across the CLI's process and the sidecar's.
 * Expired rows go when a session or a link is added: the tables stay as small as their use.
 */
import { migrate, type Migration } from '../sqlite/migrations.js'
import { openDatabase } from '../sqlite/open-database.js'
import { USED_LINK_KEPT_MS, type ConsoleSession, type LinkOutcome, type SigninStore } from './signin-store.js'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS console_links (hash TEXT PRIMARY KEY, email TEXT NOT NULL, expires_at INTEGER NOT NULL, used INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS console_sessions (hash TEXT PRIMARY KEY, email TEXT NOT NULL, csrf TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS console_links_expiry ON console_links (expires_at);
CREATE INDEX IF NOT EXISTS console_sessions_expiry ON console_sessions (expires_at);
`

/** In order, never renamed: the file records each (sqlite/migrations.ts). */
const MIGRATIONS: readonly Migration[] = [{ id: '1-tables', up: (db) => { db.exec(SCHEMA) } }]

interface LinkRow { email: string, expires_at: number, used: number }
interface SessionRow { email: string, csrf: string, expires_at: number }

export async function createSqliteSigninStore (path: string): Promise<SigninStore> {
  const db = await openDatabase(path)
  migrate(db, 'console', MIGRATIONS, path)
  const insertLink = db.prepare('INSERT INTO console_links (hash, email, expires_at) VALUES (?, ?, ?)')
  const link = db.prepare('SELECT email, expires_at, used FROM console_links WHERE hash = ?')
  const markUsed = db.prepare('UPDATE console_links SET used = 1 WHERE hash = ?')
  const oldLinks = db.prepare('DELETE FROM console_links WHERE expires_at <= ?')
  const insertSession = db.prepare('INSERT INTO console_sessions (hash, email, csrf, expires_at) VALUES (?, ?, ?, ?)')
  const session = db.prepare('SELECT email, csrf, expires_at FROM console_sessions WHERE hash = ?')
  const endSession = db.prepare('DELETE FROM console_sessions WHERE hash = ?')
  const oldSessions = db.prepare('DELETE FROM console_sessions WHERE expires_at <= ?')

  const use = db.transaction((hash: string, nowMs: number): LinkOutcome => {
    const row = link.get(hash) as LinkRow | undefined
    if (row === undefined) return { kind: 'unknown' }
    if (row.used === 1) return { kind: 'used', email: row.email }
    // Marked used when expired too: an expired link tried is as spent as one that worked.
    markUsed.run(hash)
    return row.expires_at <= nowMs ? { kind: 'expired', email: row.email } : { kind: 'signed-in', email: row.email }
  })

  return {
    async addLink (hash, email, expiresAtMs, nowMs) {
      oldLinks.run(nowMs - USED_LINK_KEPT_MS)
      insertLink.run(hash, email, expiresAtMs)
    },
    // IMMEDIATE: the read and the mark hold the write lock together, so two processes cannot both take it.
    useLink: async (hash, nowMs) => use.immediate(hash, nowMs),
    async addSession (hash, s: ConsoleSession, nowMs) {
      oldSessions.run(nowMs)
      insertSession.run(hash, s.email, s.csrfSecret, s.expiresAtMs)
    },
    async session (hash, nowMs) {
      const row = session.get(hash) as SessionRow | undefined
      return row === undefined || row.expires_at <= nowMs
        ? null
        : { email: row.email, csrfSecret: row.csrf, expiresAtMs: row.expires_at }
    },
    async endSession (hash) { endSession.run(hash) },
    async close () { db.close() },
  }
}
