/**
 * The embedded PaymentStore (SPEC §12): its own table in the inbox's SQLite file
 * (PROXY_WEBHOOK_STORE_PATH), WAL. The writes of one turn of the event loop share a transaction
 * (sqlite/group-commit.ts), committed before they resolve, so an intent is in the file's WAL before
 * its request is forwarded: a `kill -9` at any moment loses none (SPEC §12's promise). Commits are
 * not synced on their own (`synchronous = NORMAL`; SQLite syncs at each checkpoint): a sync per
 * followed POST would cost the disk's synced-write time on the request path, with the event loop
 * blocked meanwhile (better-sqlite3 is synchronous), and cap followed payouts near one per sync
 * (docs/performance.md). A power loss may lose the last moments' writes: docs/payments.md says what
 * that leaves.
 *
 * The record is JSON; the columns are what the queries use. References and transaction ids are
 * indexed by their SHA-256 (indexKey). Every index is a page written to the WAL at each commit
 * that changes it, on the request path: there is none for what only a person or the hourly
 * retention asks (a caller's listing, the settlement time), which read the table in order instead. One sidecar owns a
 * file, so leases live in its memory; the operator commands open the same file and never lease.
 */
import { migrate, type Migration } from '../sqlite/migrations.js'
import { openDatabase } from '../sqlite/open-database.js'
import { createGroupCommit } from '../sqlite/group-commit.js'
import type { PaymentRecord } from './payment-record.js'
import { indexKey, type CreateOutcome, type PaymentStore } from './payment-store.js'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS payments (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  key TEXT NOT NULL UNIQUE,
  version INTEGER NOT NULL,
  state TEXT NOT NULL,
  caller TEXT NOT NULL,
  environment TEXT NOT NULL,
  reference_sha TEXT NOT NULL,
  transaction_sha TEXT,
  created_at INTEGER NOT NULL,
  settled_at INTEGER,
  due_at INTEGER,
  notify INTEGER NOT NULL,
  record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS payments_due ON payments (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS payments_reference ON payments (reference_sha, seq);
CREATE INDEX IF NOT EXISTS payments_transaction ON payments (transaction_sha, seq) WHERE transaction_sha IS NOT NULL;
CREATE INDEX IF NOT EXISTS payments_state ON payments (state, seq);
CREATE TABLE IF NOT EXISTS payment_cursor (name TEXT PRIMARY KEY, seq INTEGER NOT NULL);
`

/** In order, never renamed: the file records each (sqlite/migrations.ts). */
const MIGRATIONS: readonly Migration[] = [{ id: '1-tables', up: (db) => { db.exec(SCHEMA) } }]

type Write =
  | { kind: 'create', record: PaymentRecord }
  | { kind: 'update', record: PaymentRecord }
  | { kind: 'remove', record: PaymentRecord }
  | { kind: 'cursor', seq: number }

type Result = CreateOutcome | PaymentRecord | boolean | null

interface Row { version: number, record: string }

function columns (r: PaymentRecord, version: number): Record<string, string | number | null> {
  return {
    id: r.id,
    key: r.key,
    version,
    state: r.state,
    caller: r.caller,
    environment: r.environment,
    referenceSha: indexKey(r.externalReference),
    transactionSha: r.transactionId === null ? null : indexKey(r.transactionId),
    createdAt: r.createdAtMs,
    settledAt: r.settledAtMs,
    dueAt: r.dueAtMs,
    notify: r.notify.length,
    record: JSON.stringify({ ...r, version }),
  }
}

const CHECKPOINT_INTERVAL_MS = 1000
/** A write-ahead log grown past this by a burst is cut back to it once checkpointed. */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024

export async function createSqlitePaymentStore (path: string): Promise<PaymentStore> {
  const db = await openDatabase(path)
  migrate(db, 'payments', MIGRATIONS, path)
  let writable = true

  const insert = db.prepare(`INSERT INTO payments (id, key, version, state, caller, environment, reference_sha, transaction_sha, created_at, settled_at, due_at, notify, record)
    VALUES (@id, @key, @version, @state, @caller, @environment, @referenceSha, @transactionSha, @createdAt, @settledAt, @dueAt, @notify, @record) ON CONFLICT (key) DO NOTHING`)
  const update = db.prepare(`UPDATE payments SET version = @version, state = @state, transaction_sha = @transactionSha, settled_at = @settledAt, due_at = @dueAt, notify = @notify, record = @record
    WHERE id = @id AND version = @version - 1`)
  const remove = db.prepare('DELETE FROM payments WHERE id = ? AND version = ?')
  const byId = db.prepare('SELECT version, record FROM payments WHERE id = ?')
  const byKey = db.prepare('SELECT version, record FROM payments WHERE key = ?')
  const byTransaction = db.prepare('SELECT version, record FROM payments WHERE transaction_sha = ? ORDER BY seq DESC LIMIT 1')
  const references = db.prepare('SELECT version, record, caller, environment FROM payments WHERE reference_sha = ? ORDER BY seq DESC')
  const due = db.prepare('SELECT id FROM payments WHERE due_at IS NOT NULL AND due_at <= ? ORDER BY due_at, seq LIMIT ?')
  const getCursor = db.prepare('SELECT seq FROM payment_cursor WHERE name = \'events\'')
  const setCursor = db.prepare('INSERT INTO payment_cursor (name, seq) VALUES (\'events\', ?) ON CONFLICT (name) DO UPDATE SET seq = max(seq, excluded.seq)')

  const recordOf = (row: unknown): PaymentRecord | null => {
    if (row === undefined) return null
    const { version, record } = row as Row
    return { ...JSON.parse(record) as PaymentRecord, version }
  }

  // The connection is the payments' own: the inbox's synced intakes keep their own setting.
  db.exec(`PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`)
  // Checkpoints once a second rather than within whichever commit passes 1,000 pages: a payout's
  // pages (its row, five index leaves) are rewritten by the next payouts, and copied to the file
  // once a second instead of every fifth of one at a thousand a second.
  const checkpoints = setInterval(() => {
    try {
      db.exec('PRAGMA wal_checkpoint(PASSIVE)')
    } catch {
      // Busy (another process's transaction): the next second's does it.
    }
  }, CHECKPOINT_INTERVAL_MS)
  checkpoints.unref()
  const writeOne = (write: Write): Result => {
    switch (write.kind) {
      case 'create': {
        const { record } = write
        if (insert.run(columns(record, record.version)).changes === 1) return { kind: 'created' }
        const existing = recordOf(byKey.get(record.key))
        // Gone between the two statements cannot happen inside one transaction.
        return existing === null ? { kind: 'created' } : { kind: 'exists', record: existing }
      }
      case 'update': {
        const next = write.record.version + 1
        return update.run(columns(write.record, next)).changes === 1 ? { ...write.record, version: next } : null
      }
      case 'remove': return remove.run(write.record.id, write.record.version).changes === 1
      case 'cursor':
        setCursor.run(write.seq)
        return null
    }
  }
  const commits = createGroupCommit((writes: readonly Write[]) => {
    try {
      const results = db.transaction(() => writes.map(writeOne))()
      writable = true
      return results
    } catch (err) {
      writable = false
      throw err
    }
  })

  const leases = new Map<string, number>()
  return {
    create: async (record) => await commits.submit({ kind: 'create', record }) as CreateOutcome,
    get: async (id) => recordOf(byId.get(id)),
    byKey: async (key) => recordOf(byKey.get(key)),
    async byReference (reference, filter) {
      for (const row of references.iterate(indexKey(reference)) as Iterable<Row & {
        caller: string
        environment: string
      }>) {
        if (filter.caller !== undefined && row.caller !== filter.caller) continue
        if (filter.environment !== undefined && row.environment !== filter.environment) continue
        const record = recordOf(row)
        // A hash is not the text: the reference itself must match.
        if (record?.externalReference === reference) return record
      }
      return null
    },
    async byTransactionId (transactionId) {
      const record = recordOf(byTransaction.get(indexKey(transactionId)))
      return record?.transactionId === transactionId ? record : null
    },
    update: async (record) => {
      const written = await commits.submit({ kind: 'update', record }) as PaymentRecord | null
      leases.delete(record.id)
      return written
    },
    remove: async (record) => {
      const removed = await commits.submit({ kind: 'remove', record }) as boolean
      leases.delete(record.id)
      return removed
    },
    async claimDue (nowMs, limit, leaseMs) {
      for (const [id, until] of leases) if (until <= nowMs) leases.delete(id)
      const ids = (due.all(
        nowMs,
        limit + leases.size,
      ) as Array<{ id: string }>).map((r) => r.id).filter((id) => !leases.has(id)).slice(0, limit)
      const claimed: PaymentRecord[] = []
      for (const id of ids) {
        const record = recordOf(byId.get(id))
        if (record === null) continue
        leases.set(id, nowMs + leaseMs)
        claimed.push(record)
      }
      return claimed
    },
    async release (id) { leases.delete(id) },
    async list ({ state, states, caller, sinceMs, limit }) {
      const where: string[] = []
      const args: Array<string | number> = []
      if (state !== undefined) { where.push('state = ?'); args.push(state) }
      if (states !== undefined) { where.push(`state IN (${states.map(() => '?').join(', ')})`); args.push(...states) }
      if (caller !== undefined) { where.push('caller = ?'); args.push(caller) }
      if (sinceMs !== undefined) { where.push('created_at >= ?'); args.push(sinceMs) }
      const sql = `SELECT version, record FROM payments ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY seq DESC LIMIT ?`
      return (db.prepare(sql).all(...args, limit) as Row[]).map((row) => recordOf(row) as PaymentRecord)
    },
    async counts () {
      const rows = db.prepare('SELECT state, count(*) AS n FROM payments WHERE state IN (\'pending\', \'stale\', \'unknown\') GROUP BY state').all() as Array<{ state: string, n: number }>
      const of = (state: string): number => rows.find((r) => r.state === state)?.n ?? 0
      return { pending: of('pending'), stale: of('stale'), unknown: of('unknown'), unverified: 0 }
    },
    async removeSettledBefore (beforeMs) {
      return db.prepare('DELETE FROM payments WHERE settled_at IS NOT NULL AND settled_at < ? AND notify = 0 AND state IN (\'succeeded\', \'failed\')').run(beforeMs).changes
    },
    cursor: async () => (getCursor.get() as { seq: number } | undefined)?.seq ?? null,
    advanceCursor: async (seq) => { await commits.submit({ kind: 'cursor', seq }) },
    ready: () => writable,
    async close () {
      clearInterval(checkpoints)
      await commits.drain()
      db.close()
    },
  }
}
