/**
 * The SQLite outbox's work, done in the thread that owns its file (sqlite/sqlite-thread.ts), so that
 * no statement, sync or checkpoint runs on the event loop that serves HTTP. sqlite-store.ts is its
 * other half, the OutboxStore on the caller's side.
 *
 * Intakes and recorded attempts that reach the thread together are written in one transaction
 * (sqlite-thread-program.ts): a commit holding an intake is synced before any of them is answered; a
 * commit of recorded attempts only is not synced on its own (below). What the bounds judge (every
 * event, and the pending and failed ones, in events and bytes) is kept in memory from one count at
 * open, so a store that has room, or none, answers without a query; delivered events are removed to
 * make room (store-room.ts), in the transaction of the intake that needs it, and never a pending or
 * failed one. Whatever may take long (the retention's removals, a replay of every failed event, a
 * listing of them all) is done a page at a time, each page one request, so intakes go in between.
 */
import { isSqliteThread, serveSqliteThread, type SqliteProgram } from '../sqlite/sqlite-thread-program.js'
import { newEventId } from './event-id.js'
import type { AttemptRecord, EventStatus, EventSummary, IntakeOutcome, ListQuery, NewEvent, OutboxStats, SequencedEvent, Settlement, StoredEvent } from './outbox-store.js'
import { attemptableAtMs } from './order-wait.js'
import { DUE_EVENTS, MARK_HEAD, openOutboxDatabase, WAITED_EVENTS } from './sqlite-schema.js'
import { attemptOf, eventOf, summaryOf, type AttemptRow, type EventRow, type SummaryRow } from './sqlite-rows.js'
import { isFull, roomFor, type Usage } from './store-room.js'

/** The module the outbox's thread runs. */
export const OUTBOX_THREAD = import.meta.url

export interface OutboxThreadOptions {
  path: string
  retentionMs: number
  maxEvents: number
  maxBytes: number
  /** How long a later event of an order key waits behind its head before it is claimed out of order. */
  orderMaxWaitMs: number
}

export type OutboxWrite =
  | { kind: 'intake', event: NewEvent }
  | { kind: 'settle', id: string, attempt: AttemptRecord, next: Settlement }

/** An intake's outcome; `full`: pending and failed events alone fill a bound, the event is refused; null: a settle. */
export type OutboxWriteResult = IntakeOutcome | { kind: 'full' } | null

/** An event handed out for an attempt, as it crosses to the caller (its body a Uint8Array there). */
export interface ClaimRow { event: StoredEvent, waitedBehind: string | null }

export interface ShownEvent { event: StoredEvent, attempts: AttemptRecord[], waitingBehind: string | null }

/** A page of a listing: its summaries, and the position to read the next page from (null: the last page). */
export interface ListPage { events: EventSummary[], after: number | null }

export type OutboxCalls = {
  /** Due events not in `leased` (the caller's leases), at most `limit`. */
  claim: (nowMs: number, limit: number, leased: readonly string[]) => ClaimRow[]
  list: (query: ListQuery, after: number, pageSize: number) => ListPage
  show: (id: string) => ShownEvent | null
  replayIds: (ids: readonly string[], nowMs: number) => string[]
  /** Up to `limit` failed events received since `sinceMs` back to pending. */
  replayFailed: (sinceMs: number, nowMs: number, limit: number) => string[]
  stats: () => OutboxStats
  /** Removes up to `limit` delivered and failed events received before `beforeMs`; returns how many. */
  removeSettled: (beforeMs: number, limit: number) => number
  /** At most `limit` events stored after `seq`, in the order stored (their bodies Uint8Arrays on the caller's side). */
  eventsAfter: (seq: number, limit: number) => SequencedEvent[]
  lastEventSeq: () => number
}

export type OutboxProgram = SqliteProgram<OutboxWrite, OutboxWriteResult, OutboxCalls>

/** Delivered events are read for eviction this many at a time, oldest first. */
const EVICTION_BATCH = 256

/** Thrown inside an eviction's savepoint to undo it: every delivered event together (`freed`) would not make room. */
class NoRoom extends Error {
  constructor (readonly freed: Usage) { super('not enough delivered events to make room') }
}

interface EvictionRow { seq: number, id: string, bytes: number }

const EVENT_COLUMNS = 'id, key, body_sha256, order_key, body, headers, source, received_at, status, attempts, next_attempt_at, conflict_with'
/** The head a pending event waits behind: the earliest pending one of its order key, when that is another. */
const WAITING_BEHIND = `CASE WHEN status = 'pending' AND order_key IS NOT NULL AND is_head = 0
  THEN (SELECT h.id FROM events h WHERE h.status = 'pending' AND h.order_key = events.order_key ORDER BY h.seq LIMIT 1) END`
const SUMMARY_COLUMNS = `seq, id, key, body_sha256, order_key, length(body) AS bytes, source, received_at, status, attempts, next_attempt_at, conflict_with,
  (SELECT count(*) FROM attempts a WHERE a.event_id = events.id) AS attempts_total, ${WAITING_BEHIND} AS waiting_behind`
const SETTLED = 'status IN (\'delivered\', \'failed\') AND received_at < ?'

export async function openOutboxProgram (options: OutboxThreadOptions): Promise<OutboxProgram> {
  const db = await openOutboxDatabase(options.path)
  const bounds = { maxEvents: options.maxEvents, maxBytes: options.maxBytes }
  const sizes = db.prepare('SELECT status = \'delivered\' AS delivered, count(*) AS n, coalesce(sum(length(body)), 0) AS bytes FROM events GROUP BY 1').all() as Array<{ delivered: number, n: number, bytes: number }>
  const delivered = sizes.find((s) => s.delivered === 1) ?? { n: 0, bytes: 0 }
  const kept = sizes.find((s) => s.delivered === 0) ?? { n: 0, bytes: 0 }
  /** Every stored event. Only this process adds or removes events (the commands never do), so it stays exact. */
  const total: Usage = { events: delivered.n + kept.n, bytes: delivered.bytes + kept.bytes }
  /**
   * The pending and failed events. A `webhooks replay` of a delivered event in another process adds
   * one unseen here; the first intake that then finds too few delivered events to evict counts again.
   */
  const held: Usage = { events: kept.n, bytes: kept.bytes }

  const byKey = db.prepare('SELECT id, body_sha256 FROM events WHERE key = ? AND received_at >= ? ORDER BY seq')
  const insert = db.prepare(`INSERT INTO events (id, key, body_sha256, order_key, body, headers, source, received_at, status, next_attempt_at, conflict_with, is_head)
    VALUES (@id, @key, @bodySha256, @orderKey, @body, @headers, @source, @receivedAtMs, 'pending', @receivedAtMs, @conflictWith,
      @orderKey IS NOT NULL AND NOT EXISTS (SELECT 1 FROM events p WHERE p.status = 'pending' AND p.order_key = @orderKey))`)
  const oldestDelivered = db.prepare(`SELECT seq, id, length(body) AS bytes FROM events INDEXED BY events_status
    WHERE status = 'delivered' ORDER BY received_at, seq LIMIT ${EVICTION_BATCH}`)
  const dropAttempts = db.prepare('DELETE FROM attempts WHERE event_id = ?')
  const dropEvent = db.prepare('DELETE FROM events WHERE seq = ?')

  const addAttempt = db.prepare('INSERT INTO attempts (event_id, at, status, error, duration_ms) VALUES (?, ?, ?, ?, ?)')
  const setState = db.prepare(`UPDATE events SET status = @status, attempts = attempts + 1, next_attempt_at = @nextAttemptAtMs,
    is_head = is_head AND @status = 'pending' WHERE id = @id RETURNING order_key, length(body) AS bytes`)
  const markHead = db.prepare(MARK_HEAD)
  const markHeads = (orderKeys: Iterable<string | null>): void => {
    for (const orderKey of new Set(orderKeys)) if (orderKey !== null) markHead.run({ orderKey })
  }

  // An intake is answered 200 only after its commit is on the disk. A recorded attempt needs no sync of
  // its own: a process crash keeps it (the WAL is in the OS's cache), a power loss before the next
  // synced commit or checkpoint at worst delivers that event once more (at least once, same
  // webhook-id). Syncing every recorded attempt capped delivery of a backlog at the disk's syncs.
  let synced = true
  const syncFor = (writes: readonly OutboxWrite[]): void => {
    const needed = writes.some((write) => write.kind === 'intake')
    if (needed !== synced) db.exec(`PRAGMA synchronous = ${needed ? 'FULL' : 'NORMAL'}`)
    synced = needed
  }

  /**
   * Removes delivered events, oldest first, until `target` is freed or none is left, in a savepoint
   * that is undone (NoRoom) unless at least `minimum` was freed. Returns what was freed.
   */
  const evict = db.transaction((minimum: Usage, target: Usage): Usage => {
    const freed = { events: 0, bytes: 0 }
    const short = (goal: Usage): boolean => freed.events < goal.events || freed.bytes < goal.bytes
    for (
      let rows = oldestDelivered.all() as EvictionRow[];
      rows.length > 0 && short(target);
      rows = oldestDelivered.all() as EvictionRow[]
    ) {
      for (const row of rows) {
        if (!short(target)) break
        dropAttempts.run(row.id)
        dropEvent.run(row.seq)
        freed.events++
        freed.bytes += row.bytes
      }
    }
    if (short(minimum)) throw new NoRoom(freed)
    return freed
  })

  const writeBatch = (writes: readonly OutboxWrite[]): OutboxWriteResult[] => {
    syncFor(writes)
    // Changes to the sizes, applied once the transaction has committed.
    const added = { total: { events: 0, bytes: 0 }, held: { events: 0, bytes: 0 } }
    const now = (which: 'total' | 'held'): Usage => ({ events: (which === 'total' ? total : held).events + added[which].events, bytes: (which === 'total' ? total : held).bytes + added[which].bytes })
    const results = db.transaction(() => writes.map((write): OutboxWriteResult => {
      if (write.kind === 'settle') {
        addAttempt.run(
          write.id,
          write.attempt.atMs,
          write.attempt.status,
          write.attempt.error,
          Math.round(write.attempt.durationMs),
        )
        const { status } = write.next
        const row = setState.get({ status, nextAttemptAtMs: status === 'pending' ? write.next.nextAttemptAtMs : 0, id: write.id }) as { order_key: string | null, bytes: number } | undefined
        if (status !== 'pending') markHeads([row?.order_key ?? null])
        if (status === 'delivered' && row !== undefined) {
          added.held.events--
          added.held.bytes -= row.bytes
        }
        return null
      }
      const event = write.event
      const prior = byKey.all(
        event.key,
        event.receivedAtMs - options.retentionMs,
      ) as Array<{ id: string, body_sha256: string }>
      const same = prior.find((p) => p.body_sha256 === event.bodySha256)
      if (same !== undefined) return { kind: 'duplicate', id: same.id }
      const size = event.body.length
      const room = roomFor(size, now('total'), now('held'), bounds)
      if (room.kind === 'full') return { kind: 'full' }
      let evicted = 0
      if (room.kind === 'evict') {
        try {
          const freed = evict(room.minimum, room.target)
          evicted = freed.events
          added.total.events -= freed.events
          added.total.bytes -= freed.bytes
        } catch (err) {
          if (!(err instanceof NoRoom)) throw err
          // Every delivered event was read and they were too few: the rest is pending or failed.
          const all = now('total')
          const counted = now('held')
          added.held.events += all.events - err.freed.events - counted.events
          added.held.bytes += all.bytes - err.freed.bytes - counted.bytes
          return { kind: 'full' }
        }
      }
      const id = newEventId()
      const conflictWith = prior[0]?.id ?? null
      insert.run({ ...event, id, headers: JSON.stringify(event.headers), conflictWith })
      for (const which of ['total', 'held'] as const) {
        added[which].events++
        added[which].bytes += size
      }
      const stored: IntakeOutcome = conflictWith === null ? { kind: 'stored', id } : { kind: 'conflict', id, conflictWith }
      return evicted > 0 ? { ...stored, evicted } : stored
    }))()
    for (const which of ['total', 'held'] as const) {
      const usage = which === 'total' ? total : held
      usage.events += added[which].events
      usage.bytes += added[which].bytes
    }
    return results
  }

  // A leased head of an order key is still its head: the events behind it stay out. Leased events are
  // the earliest due, so they are skipped by id before any body is read. Later events of a key come
  // from their own index once they have waited long enough (order-wait.ts), and go ahead of their head.
  const due = db.prepare(DUE_EVENTS)
  const waited = db.prepare(WAITED_EVENTS)
  const bySeq = db.prepare(`SELECT ${EVENT_COLUMNS} FROM events WHERE seq = ?`)
  const claim = (now: number, limit: number, leased: readonly string[]): ClaimRow[] => {
    const skip = new Set(leased)
    const wanted = limit + skip.size
    const inOrder = (due.all(now, wanted) as Array<{ seq: number, id: string, next_attempt_at: number }>)
      .map((row) => ({ seq: row.seq, id: row.id, atMs: row.next_attempt_at, behind: null }))
    const ahead = (waited.all({ waitedSince: now - options.orderMaxWaitMs, now, limit: wanted }) as Array<{
      seq: number
      id: string
      received_at: number
      next_attempt_at: number
      behind: string
    }>)
      .map((row) => ({
        seq: row.seq,
        id: row.id,
        atMs: attemptableAtMs(
          { receivedAtMs: row.received_at, nextAttemptAtMs: row.next_attempt_at, waitingBehind: row.behind },
          options.orderMaxWaitMs,
        ),
        behind: row.behind,
      }))
    const chosen = [...inOrder, ...ahead].filter((row) => !skip.has(row.id)).sort(
      (a, b) => a.atMs - b.atMs || a.seq - b.seq,
    ).slice(0, limit)
    return chosen.map(({ seq, behind }) => ({ event: eventOf(bySeq.get(seq) as EventRow), waitedBehind: behind }))
  }

  const list = (query: ListQuery, after: number, pageSize: number): ListPage => {
    const { status, sinceMs = 0 } = query
    const rows = (status === undefined
      ? db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM events WHERE received_at >= ? AND seq > ? ORDER BY seq LIMIT ?`).all(sinceMs, after, pageSize)
      : db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM events WHERE status = ? AND received_at >= ? AND seq > ? ORDER BY seq LIMIT ?`).all(status, sinceMs, after, pageSize)) as Array<SummaryRow & { seq: number }>
    return { events: rows.map(summaryOf), after: rows.length < pageSize ? null : (rows.at(-1)?.seq ?? null) }
  }

  const show = (id: string): ShownEvent | null => {
    const row = db.prepare(`SELECT ${EVENT_COLUMNS}, ${WAITING_BEHIND} AS waiting_behind FROM events WHERE id = ?`).get(id) as (EventRow & { waiting_behind: string | null }) | undefined
    if (row === undefined) return null
    const attempts = db.prepare('SELECT at, status, error, duration_ms FROM attempts WHERE event_id = ? ORDER BY rowid').all(id) as AttemptRow[]
    return { event: eventOf(row), attempts: attempts.map(attemptOf), waitingBehind: row.waiting_behind }
  }

  type Replayed = Array<{ id: string, order_key: string | null }>
  const SET_PENDING = 'SET status = \'pending\', attempts = 0, next_attempt_at = ?'
  /**
   * Back to pending, each an order key's head again when it is its earliest pending event (an older event comes first).
   */
  const replayed = (rows: Replayed): string[] => {
    markHeads(rows.map((r) => r.order_key))
    return rows.map((r) => r.id)
  }
  const replayIds = (ids: readonly string[], nowMs: number): string[] => {
    const back = { events: 0, bytes: 0 }
    const done = db.transaction((): string[] => {
      const one = db.prepare(`UPDATE events ${SET_PENDING} WHERE id = ? RETURNING id, order_key`)
      const was = db.prepare('SELECT status, length(body) AS bytes FROM events WHERE id = ?')
      return replayed(ids.flatMap((id) => {
        // A delivered event back to pending counts against the bounds again.
        const before = was.get(id) as { status: string, bytes: number } | undefined
        if (before?.status === 'delivered') {
          back.events++
          back.bytes += before.bytes
        }
        return one.all(nowMs, id) as Replayed
      }))
    })()
    held.events += back.events
    held.bytes += back.bytes
    return done
  }
  const replayFailed = db.transaction((sinceMs: number, nowMs: number, limit: number): string[] => replayed(
    db.prepare(`UPDATE events ${SET_PENDING} WHERE seq IN (SELECT seq FROM events WHERE status = 'failed' AND received_at >= ? ORDER BY seq LIMIT ?) RETURNING id, order_key`).all(nowMs, sinceMs, limit) as Replayed,
  ))

  const stats = (): OutboxStats => {
    const counts = db.prepare('SELECT status, count(*) AS n FROM events GROUP BY status').all() as Array<{ status: EventStatus, n: number }>
    const oldest = db.prepare('SELECT min(received_at) AS at FROM events WHERE status = \'pending\'').get() as { at: number | null }
    const of = (status: EventStatus): number => counts.find((c) => c.status === status)?.n ?? 0
    return { pending: of('pending'), failed: of('failed'), oldestPendingReceivedAtMs: oldest.at, full: isFull(held, bounds) }
  }

  const settledPage = db.prepare(`SELECT seq, id, status, length(body) AS bytes FROM events WHERE ${SETTLED} LIMIT ?`)
  const removeSettled = (beforeMs: number, limit: number): number => {
    const rows = db.transaction(() => {
      const page = settledPage.all(beforeMs, limit) as Array<{
        seq: number
        id: string
        status: EventStatus
        bytes: number
      }>
      for (const row of page) {
        dropAttempts.run(row.id)
        dropEvent.run(row.seq)
      }
      return page
    })()
    for (const row of rows) {
      total.events--
      total.bytes -= row.bytes
      if (row.status === 'failed') {
        held.events--
        held.bytes -= row.bytes
      }
    }
    return rows.length
  }

  const after = db.prepare('SELECT seq, id, body, received_at FROM events WHERE seq > ? ORDER BY seq LIMIT ?')
  const eventsAfter = (seq: number, limit: number): SequencedEvent[] =>
    (after.all(seq, limit) as Array<{ seq: number, id: string, body: Buffer, received_at: number }>)
      .map((r) => ({ seq: r.seq, id: r.id, body: r.body, receivedAtMs: r.received_at }))
  // AUTOINCREMENT: a removed event's number is never given again, so the latest is the table's counter.
  const counter = db.prepare('SELECT seq FROM sqlite_sequence WHERE name = \'events\'')
  const lastEventSeq = (): number => (counter.get() as { seq: number } | undefined)?.seq ?? 0

  return {
    writeBatch,
    calls: { claim, list, show, replayIds, replayFailed, stats, removeSettled, eventsAfter, lastEventSeq },
    close: () => { db.close() },
  }
}

if (isSqliteThread(OUTBOX_THREAD)) serveSqliteThread(openOutboxProgram)
