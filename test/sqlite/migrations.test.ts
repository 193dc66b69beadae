/**
 * sqlite/migrations.ts on a real file: each migration applied once, in order, whoever opens the
 * file (two connections, as a sidecar and an operator command hold); a later build's new migration
 * applied on the next open; a migration that throws leaves neither its change nor its record; a
 * migration this build does not know refused naming it.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { migrate, type Migration } from '../../src/sqlite/migrations.js'
import { openDatabase } from '../../src/sqlite/open-database.js'

function file (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'pap-migrations-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return join(dir, 'store.db')
}

t.test('applied once and in order, across connections and builds', async (t) => {
  const path = file(t)
  const ran: string[] = []
  const first: Migration[] = [
    { id: '1-tables', up: (db) => { ran.push('1'); db.exec('CREATE TABLE IF NOT EXISTS things (id TEXT PRIMARY KEY)') } },
    { id: '2-column', up: (db) => { ran.push('2'); db.exec('ALTER TABLE things ADD COLUMN size INTEGER NOT NULL DEFAULT 0') } },
  ]
  const [a, b] = [await openDatabase(path), await openDatabase(path)]
  t.teardown(() => { a.close(); b.close() })
  migrate(a, 'things', first, path)
  migrate(b, 'things', first, path)
  t.same(ran, ['1', '2'], 'once each, whichever connection opened the file first')
  a.prepare('INSERT INTO things (id, size) VALUES (?, ?)').run('kept', 3)
  const later: Migration[] = [...first, { id: '3-index', up: (db) => { ran.push('3'); db.exec('CREATE INDEX things_size ON things (size)') } }]
  migrate(b, 'things', later, path)
  t.same(ran, ['1', '2', '3'], 'a later build applies only its new migration')
  t.same(b.prepare('SELECT id, size FROM things').all(), [{ id: 'kept', size: 3 }], 'and keeps the rows')
  migrate(a, 'other', [{ id: '1-tables', up: () => { ran.push('other') } }], path)
  t.same(ran, ['1', '2', '3', 'other'], 'another store\'s migrations are its own, even with the same id')
})

t.test('a migration that throws leaves neither its change nor its record', async (t) => {
  const path = file(t)
  const db = await openDatabase(path)
  t.teardown(() => { db.close() })
  const failing: Migration[] = [{ id: '1-tables', up: (db) => { db.exec('CREATE TABLE things (id TEXT)'); throw new Error('disk full') } }]
  t.throws(() => { migrate(db, 'things', failing, path) }, /disk full/)
  t.same(db.prepare('SELECT name FROM sqlite_master WHERE name = \'things\'').all(), [], 'no table')
  t.same(db.prepare('SELECT * FROM schema_migrations').all(), [], 'no record')
})

t.test('a migration this build does not know is refused, naming it', async (t) => {
  const path = file(t)
  const db = await openDatabase(path)
  t.teardown(() => { db.close() })
  migrate(db, 'things', [{ id: '1-tables', up: () => {} }, { id: '2-newer', up: () => {} }], path)
  t.throws(() => { migrate(db, 'things', [{ id: '1-tables', up: () => {} }], path) }, { name: 'OperatorError', message: new RegExp(`the things tables of ${path} were written by a newer version \\(migration 2-newer is unknown to this one\\)`) })
})
