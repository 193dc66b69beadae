/**
 * The embedded ApprovalStore (SPEC §11): its own table in the inbox's SQLite file
 * (PROXY_WEBHOOK_STORE_PATH), WAL and synced commits, so a 202 is answered only once the held
 * request is on disk. A decision is one conditional UPDATE (`WHERE status = 'pending'`): SQLite
 * serialises writers, also across processes (the CLI beside the sidecar), so of two decisions one wins.
 */
import { migrate, type Migration } from '../sqlite/migrations.js'
import { openDatabase } from '../sqlite/open-database.js'
import type { ApprovalStatus } from '../objects/approval-object.js'
import { decidedRecord, type ApprovalRecord, type DecideOutcome, type Decision, type ForwardState } from './approval-record.js'
import type { ApprovalStore } from './approval-store.js'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS approvals (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  key TEXT NOT NULL,
  status TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  forward TEXT NOT NULL,
  record TEXT NOT NULL,
  body BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS approvals_key ON approvals (key, seq);
CREATE INDEX IF NOT EXISTS approvals_status ON approvals (status, expires_at);
CREATE INDEX IF NOT EXISTS approvals_status_seq ON approvals (status, seq);
`

/** In order, never renamed: the file records each (sqlite/migrations.ts). */
const MIGRATIONS: readonly Migration[] = [{ id: '1-tables', up: (db) => { db.exec(SCHEMA) } }]

interface Row { status: string, forward: string, record: string, body: Buffer }

/** The record's fields other than body, status and forward live as JSON; those three are columns the queries use. */
function toRow (approval: ApprovalRecord): {
  id: string
  key: string
  status: string
  expiresAt: number
  forward: string
  record: string
  body: Buffer
} {
  const { body, status, forward, ...rest } = approval
  return {
    id: approval.id,
    key: approval.key,
    status,
    expiresAt: approval.expiresAtMs,
    forward,
    record: JSON.stringify(rest),
    body,
  }
}

function fromRow (row: Row): ApprovalRecord {
  const rest = JSON.parse(row.record) as Omit<ApprovalRecord, 'body' | 'status' | 'forward'>
  return { ...rest, body: row.body, status: row.status as ApprovalStatus, forward: row.forward as ForwardState }
}

export async function createSqliteApprovalStore (path: string): Promise<ApprovalStore> {
  // Loaded only when approvals are configured: a proxy without them never opens the native module.
  const db = await openDatabase(path)
  migrate(db, 'approvals', MIGRATIONS, path)

  const columns = 'status, forward, record, body'
  const insert = db.prepare('INSERT INTO approvals (id, key, status, expires_at, forward, record, body) VALUES (@id, @key, @status, @expiresAt, @forward, @record, @body)')
  const byId = db.prepare(`SELECT ${columns} FROM approvals WHERE id = ?`)
  const byKey = db.prepare(`SELECT ${columns} FROM approvals WHERE key = ? ORDER BY seq DESC LIMIT 1`)
  const all = db.prepare(`SELECT ${columns} FROM approvals ORDER BY seq`)
  const withStatus = db.prepare(`SELECT ${columns} FROM approvals WHERE status = ? ORDER BY seq`)
  // Pages (the console): by the (status, seq) index, so a page costs its rows, not the whole status.
  const pendingPage = db.prepare(`SELECT ${columns} FROM approvals WHERE status = 'pending' ORDER BY seq LIMIT ? OFFSET ?`)
  const decidedPage = db.prepare(`SELECT ${columns} FROM approvals WHERE status <> 'pending' ORDER BY seq DESC LIMIT ? OFFSET ?`)
  const pendingCount = db.prepare('SELECT count(*) AS n FROM approvals WHERE status = \'pending\'')
  const decidedCount = db.prepare('SELECT count(*) AS n FROM approvals WHERE status <> \'pending\'')
  const toSettle = db.prepare(`SELECT ${columns} FROM approvals WHERE status <> 'pending' AND forward <> 'answered' ORDER BY seq`)
  const dueToExpire = db.prepare(`SELECT ${columns} FROM approvals WHERE status = 'pending' AND expires_at <= ? ORDER BY seq`)
  const decide = db.prepare('UPDATE approvals SET status = @status, record = @record WHERE id = @id AND status = \'pending\'')
  // The stage's seal lives in the record's JSON, beside the others: no column to add to files written before.
  const move = db.prepare('UPDATE approvals SET forward = ?, record = json_set(record, \'$.forwardSeal\', ?) WHERE id = ? AND forward = ?')
  // The decision's time lives in the record's JSON: no column to add to files written before.
  const removeSettled = db.prepare('DELETE FROM approvals WHERE status <> \'pending\' AND forward = \'answered\' AND json_extract(record, \'$.decidedAtMs\') < ?')

  const one = (row: unknown): ApprovalRecord | null => row === undefined ? null : fromRow(row as Row)
  const many = (rows: unknown[]): ApprovalRecord[] => (rows as Row[]).map(fromRow)

  const decideNow = db.transaction((id: string, decision: Decision, nowMs: number): DecideOutcome => {
    const current = one(byId.get(id))
    if (current === null) return { kind: 'missing' }
    // Past its time it is expired, whatever the sweeper has written yet: silence is never consent.
    if (current.status !== 'pending' || (decision.status !== 'expired' && current.expiresAtMs <= nowMs)) {
      return { kind: 'already', approval: current.status === 'pending' ? { ...current, status: 'expired' } : current }
    }
    const decided = decidedRecord(current, decision)
    const row = toRow(decided)
    const changed = decide.run({ id, status: row.status, record: row.record }).changes
    return changed === 1 ? { kind: 'decided', approval: decided } : { kind: 'already', approval: current }
  })

  return {
    create: async (approval) => { insert.run(toRow(approval)) },
    get: async (id) => one(byId.get(id)),
    byKey: async (key) => one(byKey.get(key)),
    list: async (status) => many(status === undefined ? all.all() : withStatus.all(status)),
    page: async ({ status, offset, limit }) => ({
      approvals: many((status === 'pending' ? pendingPage : decidedPage).all(limit, offset)),
      total: ((status === 'pending' ? pendingCount : decidedCount).get() as { n: number }).n,
    }),
    // IMMEDIATE: the read and the write hold the write lock together, so another process cannot decide in between.
    decide: async (id, decision, nowMs) => decideNow.immediate(id, decision, nowMs),
    toSettle: async () => many(toSettle.all()),
    dueToExpire: async (nowMs) => many(dueToExpire.all(nowMs)),
    moveForward: async (id, from, to, seal) => move.run(to, seal, id, from).changes === 1,
    removeSettledBefore: async (beforeMs) => removeSettled.run(beforeMs).changes,
    close: async () => { db.close() },
  }
}
