/**
 * The embedded OutboxStore (SPEC §10): one SQLite file per outbox, owned by a thread of its own
 * (sqlite/sqlite-thread.ts) that does the store's work (sqlite-outbox-thread.ts), so that neither a
 * statement, nor the sync of a commit, nor a checkpoint holds the event loop the proxy and the inbox
 * share. An intake resolves once its commit is synced; the intakes and recorded attempts that
 * reach the thread together share one transaction and one sync.
 *
 * One sidecar owns a file, so leases live in its memory, here: a claim writes nothing, a thread
 * started again keeps them, and a killed process's deliveries are claimable again at the next start
 * (at least once). The operator commands open the same file and never lease.
 */
import type { Logger } from 'pino'
import { WebhookStoreUnavailableError } from '../errors.js'
import { startSqliteThread, type SqliteThread } from '../sqlite/sqlite-thread.js'
import type { ClaimedEvent, EventSummary, OutboxStore } from './outbox-store.js'
import { OUTBOX_THREAD, type ListPage, type OutboxProgram, type OutboxThreadOptions } from './sqlite-outbox-thread.js'

export interface SqliteStoreOptions extends OutboxThreadOptions {
  /** Where the thread's failures and restarts are logged. */
  log: Logger
  /** Every request to the thread is answered within this, or fails (SPEC §10: 503 within 5 s). */
  deadlineMs?: number
}

const FULL = 'the inbox is full (PROXY_WEBHOOK_STORE_MAX_EVENTS or _MAX_BYTES): pending and failed events alone fill it'
/** Events removed, replayed or listed per request to the thread: intakes go in between. */
const PAGE = 500

export async function createSqliteStore (options: SqliteStoreOptions): Promise<OutboxStore> {
  const { log, deadlineMs, ...program } = options
  const thread: SqliteThread<OutboxProgram> = await startSqliteThread<OutboxProgram>({ program: OUTBOX_THREAD, options: program, name: 'outbox', log, deadlineMs })
  let writable = true
  const unavailable = (err: unknown): WebhookStoreUnavailableError =>
    err instanceof WebhookStoreUnavailableError ? err : new WebhookStoreUnavailableError('the store cannot write', err)
  /** A write the thread answered: the store takes writes again, or it does not (a full disk, a dead thread). */
  const written = async <T>(write: Promise<T>): Promise<T> => {
    try {
      const result = await write
      writable = true
      return result
    } catch (err) {
      writable = false
      throw unavailable(err)
    }
  }

  const leases = new Map<string, number>()
  let claims: Promise<unknown> = Promise.resolve()
  return {
    async intake (event) {
      const outcome = await written(thread.write({ kind: 'intake', event }))
      if (outcome === null) throw new WebhookStoreUnavailableError('the store answered nothing')
      if (outcome.kind === 'full') throw new WebhookStoreUnavailableError(FULL)
      return outcome
    },
    claimDue (nowMs, limit, leaseMs) {
      // One claim at a time, each told the leases the one before it took.
      const claimed = claims.then(async () => {
        for (const [id, until] of leases) if (until <= nowMs) leases.delete(id)
        const rows = await thread.call('claim', nowMs, limit, [...leases.keys()])
        return rows.map(({ event, waitedBehind }): ClaimedEvent => {
          leases.set(event.id, nowMs + leaseMs)
          return { ...withBody(event), waitedBehind }
        })
      })
      claims = claimed.catch(() => {})
      return claimed
    },
    async settle (id, attempt, next) {
      // An attempt that could not be recorded keeps its lease: not attempted again until it ends.
      await written(thread.write({ kind: 'settle', id, attempt, next }))
      leases.delete(id)
    },
    async release (id) { leases.delete(id) },
    async list ({ limit = 1000, ...query }) {
      const events: EventSummary[] = []
      for (let after: number | null = 0; after !== null && events.length < limit;) {
        const page: ListPage = await thread.call('list', query, after, Math.min(PAGE, limit - events.length))
        events.push(...page.events)
        after = page.after
      }
      return events
    },
    async show (id) {
      const shown = await thread.call('show', id)
      return shown === null ? null : { ...shown, event: withBody(shown.event) }
    },
    async replay (selection, nowMs) {
      if ('ids' in selection) return await thread.call('replayIds', selection.ids, nowMs)
      const ids: string[] = []
      for (let page = PAGE; page === PAGE;) {
        const replayed = await thread.call('replayFailed', selection.failedSinceMs, nowMs, PAGE)
        ids.push(...replayed)
        page = replayed.length
      }
      return ids
    },
    async stats () { return await thread.call('stats') },
    async removeSettledBefore (beforeMs) {
      let removed = 0
      for (let page = PAGE; page === PAGE;) {
        page = await thread.call('removeSettled', beforeMs, PAGE)
        removed += page
      }
      return removed
    },
    async eventsAfter (seq, limit) {
      const events = await thread.call('eventsAfter', seq, limit)
      return events.map(withBody)
    },
    async lastEventSeq () { return await thread.call('lastEventSeq') },
    ready: () => writable && thread.ready(),
    close: async () => { await thread.close() },
  }
}

/** A body crosses threads as a Uint8Array: the store's records hold a Buffer (a view of the same bytes). */
function withBody<T extends { body: Buffer }> (event: T): T {
  const body: Uint8Array = event.body
  return { ...event, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) }
}
