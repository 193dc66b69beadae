/**
 * Versioned schema changes for the stores that share a SQLite file (the inbox's events, approvals,
 * payments, the console's sign-ins; each store its own tables). Each store lists its migrations in
 * order; the file records which were applied (`schema_migrations`), and opening a store applies the
 * rest, each in one transaction with its record, taken with the write lock so that a sidecar and an
 * operator command opening the same file at once apply each once. A store's first migration is
 * written `IF NOT EXISTS`: a file written before migrations were recorded already has those tables
 * and only gains the record.
 */
import type Database from 'better-sqlite3'
import { OperatorError } from '../operator-error.js'

export interface Migration {
  /** Never renamed or reordered once released: the file records it. */
  readonly id: string
  readonly up: (db: Database.Database) => void
}

const LEDGER = 'CREATE TABLE IF NOT EXISTS schema_migrations (store TEXT NOT NULL, id TEXT NOT NULL, applied_at INTEGER NOT NULL, PRIMARY KEY (store, id))'

/**
 * Applies `store`'s migrations the file lacks. Throws OperatorError when the file records one this
 * build does not know: a newer build wrote it, and this one cannot tell what its tables mean now.
 */
export function migrate (db: Database.Database, store: string, migrations: readonly Migration[], path: string): void {
  db.exec(LEDGER)
  db.transaction(() => {
    const applied = new Set((db.prepare('SELECT id FROM schema_migrations WHERE store = ?').all(store) as Array<{ id: string }>).map((row) => row.id))
    const known = new Set(migrations.map((m) => m.id))
    const unknown = [...applied].filter((id) => !known.has(id))
    if (unknown.length > 0) {
      throw new OperatorError(`the ${store} tables of ${path} were written by a newer version (migration ${unknown.join(', ')} is unknown to this one): run that version, or restore a copy of the file from before it`)
    }
    const record = db.prepare('INSERT INTO schema_migrations (store, id, applied_at) VALUES (?, ?, ?)')
    for (const migration of migrations) {
      if (applied.has(migration.id)) continue
      migration.up(db)
      record.run(store, migration.id, Date.now())
    }
  }).immediate()
}
