/**
 * The embedded InboxStore (SPEC §10): one SQLite file, synced commits for intakes, and every write of a turn of
 * the event loop (intakes and recorded attempts) grouped into one transaction (sqlite/group-commit.ts).
 * SQLite calls are synchronous and short; the bound (events, bytes) is kept in memory from one count
 * at open, so a full store answers 503 without a query, and nothing stored is ever dropped to make room.
 *
 * One sidecar owns a file, so leases live in its memory: a claim writes nothing, and a killed
 * process's deliveries are claimable again at the next start (at least once). The operator commands
 * open the same file and never lease.
 */
import { WebhookStoreUnavailableError } from '../errors.js'
import { newEventId } from './event-id.js'
import { createGroupCommit } from '../sqlite/group-commit.js'
import type { AttemptRecord, InboxStore, IntakeOutcome, NewEvent, Settlement, StoredEvent } from './inbox-store.js'
import { DUE_EVENTS, MARK_HEAD, openInboxDatabase } from './sqlite-schema.js'
import { attemptOf, eventOf, summaryOf, type AttemptRow, type EventRow, type SummaryRow } from './sqlite-rows.js'

export interface SqliteStoreOptions {
  path: string
  retentionMs: number
  maxEvents: number
  maxBytes: number
}

type Write =
  | { kind: 'intake', event: NewEvent }
  | { kind: 'settle', id: string, attempt: AttemptRecord, next: Settlement }

const EVENT_COLUMNS = 'id, key, body_sha256, order_key, body, headers, source, received_at, status, attempts, next_attempt_at, conflict_with'
const SUMMARY_COLUMNS = 'id, key, body_sha256, order_key, length(body) AS bytes, source, received_at, status, attempts, next_attempt_at, conflict_with'

export async function createSqliteStore (options: SqliteStoreOptions): Promise<InboxStore> {
  const db = await openInboxDatabase(options.path)
  const totals = db.prepare('SELECT count(*) AS n, coalesce(sum(length(body)), 0) AS bytes FROM events').get() as { n: number, bytes: number }
  let count = totals.n
  let bytes = totals.bytes
  let writable = true

  const byKey = db.prepare('SELECT id, body_sha256 FROM events WHERE key = ? AND received_at >= ? ORDER BY seq')
  const insert = db.prepare(`INSERT INTO events (id, key, body_sha256, order_key, body, headers, source, received_at, status, next_attempt_at, conflict_with, is_head)
    VALUES (@id, @key, @bodySha256, @orderKey, @body, @headers, @source, @receivedAtMs, 'pending', @receivedAtMs, @conflictWith,
      @orderKey IS NOT NULL AND NOT EXISTS (SELECT 1 FROM events p WHERE p.status = 'pending' AND p.order_key = @orderKey))`)

  const addAttempt = db.prepare('INSERT INTO attempts (event_id, at, status, error, duration_ms) VALUES (?, ?, ?, ?, ?)')
  const setState = db.prepare(`UPDATE events SET status = @status, attempts = attempts + 1, next_attempt_at = @nextAttemptAtMs,
    is_head = is_head AND @status = 'pending' WHERE id = @id RETURNING order_key`)
  const markHead = db.prepare(MARK_HEAD)
  const markHeads = (orderKeys: Iterable<string | null>): void => {
    for (const orderKey of new Set(orderKeys)) if (orderKey !== null) markHead.run({ orderKey })
  }

  // An intake is answered 200 only after its commit is on the disk. A recorded attempt needs no sync of
  // its own: a process crash keeps it (the WAL is in the OS's cache), a power loss before the next
  // synced commit or checkpoint at worst delivers that event once more (at least once, same
  // webhook-id). Syncing every recorded attempt capped delivery of a backlog at the disk's syncs.
  let synced = true
  const syncFor = (writes: readonly Write[]): void => {
    const needed = writes.some((write) => write.kind === 'intake')
    if (needed !== synced) db.exec(`PRAGMA synchronous = ${needed ? 'FULL' : 'NORMAL'}`)
    synced = needed
  }

  const writeBatch = (writes: readonly Write[]): Array<IntakeOutcome | WebhookStoreUnavailableError | null> => {
    syncFor(writes)
    let addedCount = 0
    let addedBytes = 0
    const results = db.transaction(() => writes.map((write): IntakeOutcome | WebhookStoreUnavailableError | null => {
      if (write.kind === 'settle') {
        addAttempt.run(write.id, write.attempt.atMs, write.attempt.status, write.attempt.error, Math.round(write.attempt.durationMs))
        const { status } = write.next
        const row = setState.get({ status, nextAttemptAtMs: status === 'pending' ? write.next.nextAttemptAtMs : 0, id: write.id }) as { order_key: string | null } | undefined
        if (status !== 'pending') markHeads([row?.order_key ?? null])
        return null
      }
      const event = write.event
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
  const commits = createGroupCommit((writes: readonly Write[]) => {
    try {
      const results = writeBatch(writes)
      writable = true
      return results
    } catch (err) {
      writable = false
      throw new WebhookStoreUnavailableError('the store cannot write', err)
    }
  })

  // A leased head of an order key is still its head: the events behind it stay out. Leased events are
  // the earliest due, so they are skipped by id before any body is read.
  const due = db.prepare(DUE_EVENTS)
  const bySeq = db.prepare(`SELECT ${EVENT_COLUMNS} FROM events WHERE seq = ?`)
  const leases = new Map<string, number>()
  const claim = (now: number, limit: number, leaseMs: number): StoredEvent[] => {
    for (const [id, until] of leases) if (until <= now) leases.delete(id)
    const chosen = (due.all(now, limit + leases.size) as Array<{ seq: number, id: string }>).filter((row) => !leases.has(row.id)).slice(0, limit)
    return chosen.map(({ seq, id }) => {
      leases.set(id, now + leaseMs)
      return eventOf(bySeq.get(seq) as EventRow)
    })
  }

  return {
    async intake (event) {
      const outcome = await commits.submit({ kind: 'intake', event })
      if (outcome instanceof Error) throw outcome
      if (outcome === null) throw new WebhookStoreUnavailableError('the store answered nothing')
      return outcome
    },
    async claimDue (nowMs, limit, leaseMs) { return claim(nowMs, limit, leaseMs) },
    async settle (id, attempt, next) {
      const result = await commits.submit({ kind: 'settle', id, attempt, next })
      leases.delete(id)
      if (result instanceof Error) throw result
    },
    async release (id) { leases.delete(id) },
    async list ({ status, sinceMs = 0, limit = 1000 }) {
      const rows = status === undefined
        ? db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM events WHERE received_at >= ? ORDER BY seq LIMIT ?`).all(sinceMs, limit)
        : db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM events WHERE status = ? AND received_at >= ? ORDER BY seq LIMIT ?`).all(status, sinceMs, limit)
      return (rows as SummaryRow[]).map(summaryOf)
    },
    async show (id) {
      const row = db.prepare(`SELECT ${EVENT_COLUMNS} FROM events WHERE id = ?`).get(id) as EventRow | undefined
      if (row === undefined) return null
      const attempts = db.prepare('SELECT at, status, error, duration_ms FROM attempts WHERE event_id = ? ORDER BY rowid').all(id) as AttemptRow[]
      return { event: eventOf(row), attempts: attempts.map(attemptOf) }
    },
    async replay (selection, nowMs) {
      const set = 'SET status = \'pending\', attempts = 0, next_attempt_at = ?'
      type Replayed = Array<{ id: string, order_key: string | null }>
      const rows = db.transaction((): Replayed => {
        const one = db.prepare(`UPDATE events ${set} WHERE id = ? RETURNING id, order_key`)
        const replayed = 'ids' in selection
          ? selection.ids.flatMap((id) => one.all(nowMs, id) as Replayed)
          : db.prepare(`UPDATE events ${set} WHERE status = 'failed' AND received_at >= ? RETURNING id, order_key`).all(nowMs, selection.failedSinceMs) as Replayed
        // An older event back to pending becomes its key's head again, ahead of the newer ones.
        markHeads(replayed.map((r) => r.order_key))
        return replayed
      })()
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
    async eventsAfter (seq, limit) {
      const rows = db.prepare('SELECT seq, id, body, received_at FROM events WHERE seq > ? ORDER BY seq LIMIT ?').all(seq, limit) as Array<{ seq: number, id: string, body: Buffer, received_at: number }>
      return rows.map((r) => ({ seq: r.seq, id: r.id, body: r.body, receivedAtMs: r.received_at }))
    },
    // AUTOINCREMENT: a removed event's number is never given again, so the latest is the table's counter.
    lastEventSeq: async () => (db.prepare('SELECT seq FROM sqlite_sequence WHERE name = \'events\'').get() as { seq: number } | undefined)?.seq ?? 0,
    ready: () => writable,
    async close () {
      await commits.drain()
      db.close()
    },
  }
}
