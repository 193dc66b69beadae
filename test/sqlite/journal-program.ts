/**
 * A small program for the SQLite thread's tests (sqlite-thread.test.ts): a journal of unique entries
 * in a real SQLite file, each write one entry, each committed batch numbered, so a test sees which
 * writes shared a transaction. Two calls stand for what goes wrong in a thread: `hold` blocks it
 * until the test opens the gate (a sync on a disk that stopped answering), `exit` ends it (a crash).
 */
import { isSqliteThread, serveSqliteThread, type SqliteProgram } from '../../src/sqlite/sqlite-thread-program.js'
import { openDatabase } from '../../src/sqlite/open-database.js'

export const JOURNAL_THREAD = import.meta.url

export interface JournalOptions {
  path: string
  /** One Int32: `hold` waits while it is 0. */
  gate: SharedArrayBuffer
}

export interface Entry { entry: string, batch: number }

export type JournalProgram = SqliteProgram<string, number, {
  entries: () => Entry[]
  hold: () => null
  exit: () => null
}>

export async function openJournal (options: JournalOptions): Promise<JournalProgram> {
  const db = await openDatabase(options.path)
  db.exec('CREATE TABLE IF NOT EXISTS entries (entry TEXT NOT NULL UNIQUE, batch INTEGER NOT NULL)')
  let batch = (db.prepare('SELECT coalesce(max(batch), 0) AS n FROM entries').get() as { n: number }).n
  const insert = db.prepare('INSERT INTO entries (entry, batch) VALUES (?, ?)')
  const gate = new Int32Array(options.gate)
  return {
    writeBatch: db.transaction((entries: readonly string[]) => {
      batch++
      return entries.map(() => batch).map((n, i) => { insert.run(entries[i], n); return n })
    }),
    calls: {
      entries: () => db.prepare('SELECT entry, batch FROM entries ORDER BY rowid').all() as Entry[],
      hold: () => { Atomics.wait(gate, 0, 0); return null },
      exit: () => process.exit(1),
    },
    close: () => { db.close() },
  }
}

if (isSqliteThread(JOURNAL_THREAD)) serveSqliteThread(openJournal)
