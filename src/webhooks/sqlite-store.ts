/**
 * The embedded InboxStore (SPEC §10): one SQLite file, synced commits, intakes grouped into one
 * transaction per turn of the event loop (group-commit.ts). SQLite calls are synchronous and short;
 * the bound (events, bytes) is kept in memory from one count at open, so a full store answers 503
 * without a query, and nothing stored is ever dropped to make room.
 */
import { WebhookStoreUnavailableError } from '../errors.js'
import { newEventId } from './event-id.js'
import { createGroupCommit } from './group-commit.js'
import type { InboxStore, IntakeOutcome, NewEvent, StoredEvent } from './inbox-store.js'
import { openInboxDatabase } from './sqlite-schema.js'
import { attemptOf, eventOf, type AttemptRow, type EventRow } from './sqlite-rows.js'

export interface SqliteStoreOptions {
  path: string
  retentionMs: number
  maxEvents: number
  maxBytes: number
  /**
   * The sidecar owns the file's deliveries: leases left by a killed process are void at once. The
   * operator commands open the same file without taking them over.
   */
  ownLeases: boolean
}

const EVENT_COLUMNS = 'id, key, body_sha256, order_key, body, headers, source, received_at, status, attempts, next_attempt_at, conflict_with'

export function createSqliteStore (options: SqliteStoreOptions): InboxStore {
  const db = openInboxDatabase(options.path)
  if (options.ownLeases) db.prepare('UPDATE events SET lease_until = 0 WHERE lease_until > 0').run()
  const totals = db.prepare('SELECT count(*) AS n, coalesce(sum(length(body)), 0) AS bytes FROM events').get() as { n: number, bytes: number }
  let count = totals.n
  let bytes = totals.bytes
  let writable = true

  const byKey = db.prepare('SELECT id, body_sha256 FROM events WHERE key = ? AND received_at >= ? ORDER BY seq')
  const insert = db.prepare(`INSERT INTO events (id, key, body_sha256, order_key, body, headers, source, received_at, status, next_attempt_at, conflict_with)
    VALUES (@id, @key, @bodySha256, @orderKey, @body, @headers, @source, @receivedAtMs, 'pending', @receivedAtMs, @conflictWith)`)

  const intakeBatch = (events: readonly NewEvent[]): Array<IntakeOutcome | WebhookStoreUnavailableError> => {
    let addedCount = 0
    let addedBytes = 0
    const results = db.transaction(() => events.map((event): IntakeOutcome | WebhookStoreUnavailableError => {
      const prior = byKey.all(event.key, event.receivedAtMs - options.retentionMs) as Array<{ id: string, body_sha256: string }>
      const same = prior.find((p) => p.body_sha256 === event.bodySha256)
      if (same !== undefined) return { kind: 'duplicate', id: same.id }
      if (count + addedCount + 1 > options.maxEvents || bytes + addedBytes + event.body.length > options.maxBytes) {
        return new WebhookStoreUnavailableError('the inbox is full (PROXY_WEBHOOK_STORE_MAX_EVENTS or _MAX_BYTES)')
      }
      const id = newEventId()
      const conflictWith = prior[0]?.id ?? null
      insert.run({ ...event, id, headers: JSON.stringify(event.headers), conflictWith })
      addedCount++
      addedBytes += event.body.length
      return conflictWith === null ? { kind: 'stored', id } : { kind: 'conflict', id, conflictWith }
    }))()
    count += addedCount
    bytes += addedBytes
    return results
  }
  const commits = createGroupCommit((events: readonly NewEvent[]) => {
    try {
      const results = intakeBatch(events)
      writable = true
      return results
    } catch (err) {
      writable = false
      throw new WebhookStoreUnavailableError('the store cannot write', err)
    }
  })

  const due = db.prepare(`SELECT ${EVENT_COLUMNS} FROM events e WHERE status = 'pending' AND next_attempt_at <= @now AND lease_until <= @now
    AND (order_key IS NULL OR seq = (SELECT min(seq) FROM events p WHERE p.status = 'pending' AND p.order_key = e.order_key))
    ORDER BY next_attempt_at, seq LIMIT @limit`)
  const lease = db.prepare('UPDATE events SET lease_until = ? WHERE id = ?')
  const claim = db.transaction((now: number, limit: number, leaseMs: number): StoredEvent[] => {
    const rows = due.all({ now, limit }) as EventRow[]
    for (const row of rows) lease.run(now + leaseMs, row.id)
    return rows.map(eventOf)
  })
  const addAttempt = db.prepare('INSERT INTO attempts (event_id, at, status, error, duration_ms) VALUES (?, ?, ?, ?, ?)')
  const setState = db.prepare('UPDATE events SET status = ?, attempts = attempts + 1, next_attempt_at = ?, lease_until = 0 WHERE id = ?')

  return {
    async intake (event) {
      const outcome = await commits.submit(event)
      if (outcome instanceof Error) throw outcome
      return outcome
    },
    async claimDue (nowMs, limit, leaseMs) { return claim(nowMs, limit, leaseMs) },
    async settle (id, attempt, next) {
      db.transaction(() => {
        addAttempt.run(id, attempt.atMs, attempt.status, attempt.error, Math.round(attempt.durationMs))
        setState.run(next.status, next.status === 'pending' ? next.nextAttemptAtMs : 0, id)
      })()
    },
    async release (id) { db.prepare('UPDATE events SET lease_until = 0 WHERE id = ?').run(id) },
    async list ({ status, sinceMs = 0, limit = 1000 }) {
      const rows = status === undefined
        ? db.prepare(`SELECT ${EVENT_COLUMNS} FROM events WHERE received_at >= ? ORDER BY seq LIMIT ?`).all(sinceMs, limit)
        : db.prepare(`SELECT ${EVENT_COLUMNS} FROM events WHERE status = ? AND received_at >= ? ORDER BY seq LIMIT ?`).all(status, sinceMs, limit)
      return (rows as EventRow[]).map(eventOf)
    },
    async show (id) {
      const row = db.prepare(`SELECT ${EVENT_COLUMNS} FROM events WHERE id = ?`).get(id) as EventRow | undefined
      if (row === undefined) return null
      const attempts = db.prepare('SELECT at, status, error, duration_ms FROM attempts WHERE event_id = ? ORDER BY rowid').all(id) as AttemptRow[]
      return { event: eventOf(row), attempts: attempts.map(attemptOf) }
    },
    async replay (selection, nowMs) {
      const set = 'SET status = \'pending\', attempts = 0, next_attempt_at = ?, lease_until = 0'
      if ('ids' in selection) {
        const one = db.prepare(`UPDATE events ${set} WHERE id = ? RETURNING id`)
        return db.transaction(() => selection.ids.flatMap((id) => (one.all(nowMs, id) as Array<{ id: string }>).map((r) => r.id)))()
      }
      const rows = db.prepare(`UPDATE events ${set} WHERE status = 'failed' AND received_at >= ? RETURNING id`).all(nowMs, selection.failedSinceMs) as Array<{ id: string }>
      return rows.map((r) => r.id)
    },
    async stats () {
      const counts = db.prepare('SELECT status, count(*) AS n FROM events GROUP BY status').all() as Array<{ status: string, n: number }>
      const oldest = db.prepare('SELECT min(received_at) AS at FROM events WHERE status = \'pending\'').get() as { at: number | null }
      const of = (status: string): number => counts.find((c) => c.status === status)?.n ?? 0
      return { pending: of('pending'), failed: of('failed'), oldestPendingReceivedAtMs: oldest.at }
    },
    async removeSettledBefore (beforeMs) {
      const gone = db.transaction(() => {
        const settled = 'status IN (\'delivered\', \'failed\') AND received_at < ?'
        const size = db.prepare(`SELECT count(*) AS n, coalesce(sum(length(body)), 0) AS bytes FROM events WHERE ${settled}`).get(beforeMs) as { n: number, bytes: number }
        db.prepare(`DELETE FROM attempts WHERE event_id IN (SELECT id FROM events WHERE ${settled})`).run(beforeMs)
        db.prepare(`DELETE FROM events WHERE ${settled}`).run(beforeMs)
        return size
      })()
      count -= gone.n
      bytes -= gone.bytes
      return gone.n
    },
    ready: () => writable,
    async close () {
      await commits.drain()
      db.close()
    },
  }
}
