/**
 * The in-process StateStore (SPEC §9 without PROXY_REDIS_URL): one replica's records and limits.
 * lru-cache bounds it, records by bytes (a burst of large answers evicts the oldest records, never
 * the process), in-flight marks, windows and totals by count, and expires entries by TTL. Every
 * operation is synchronous inside one event-loop turn, which is what makes claims and reservations
 * atomic here.
 * Time comes from the injected clock so tests can move it.
 */
import { LRUCache } from 'lru-cache'
import type { Clock } from '../clock.js'
import { StateUnavailableError } from '../errors.js'
import type { ClaimOutcome, IdempotencyRecord, RateVerdict, StateStore, StoreStatus } from './state-store.js'

/** Bytes of records kept in memory; the oldest are evicted past it (a record over it is not kept). */
export const DEFAULT_MEMORY_RECORD_BYTES = 64 * 1024 * 1024
/** Rate windows and day totals kept; each is small, the bound is against a key explosion. */
export const DEFAULT_MEMORY_COUNTER_KEYS = 100_000
/**
 * In-flight marks kept: one per transaction being forwarded, far more than a sidecar ever holds.
 * Past it a claim is refused (503): evicting a mark would let a duplicate through.
 */
export const DEFAULT_MAX_IN_FLIGHT_MARKS = 100_000
const STALE_MARKS_PURGE_INTERVAL_MS = 1000
/**
 * References marked held by an approval (SPEC §11): one per approval within its retention, each
 * waiting on a person, so far more than a sidecar ever keeps. Past it a hold is refused (503):
 * evicting a mark would let a held reference's retry be held a second time.
 */
export const DEFAULT_MAX_HELD_MARKS = 100_000
/** Timestamps kept per rate window: a limit above it is admitted at this rate at most. */
export const MAX_RATE_WINDOW_ENTRIES = 100_000

/**
 * A record as kept: one latin1 string, `<status> <fingerprint> <headers as JSON>\n<body>`, byte for
 * byte. One string is one object on V8's heap with nothing inside to trace, where a record of
 * fields, a headers object and a body is several, each traced and, while young, copied by every
 * collection; a Buffer body would be a slice of an 8 KiB pool that it keeps alive outside the heap,
 * where V8 answers growth with full collections. (Measured: docs/performance.md.) Replays, the
 * only readers of a record, are rare.
 */
type PackedRecord = string

/**
 * The request times of one rate window, oldest first, as the Redis store's sorted set holds them.
 * Expired times are skipped by moving `head`, and the array is compacted once half of it is
 * skipped: a hit costs O(1) amortised. Filtering a copy of the array on every hit cost O(requests in
 * the window): a caller allowed 10,000 requests a second halved the proxy's throughput.
 */
class SlidingLog {
  times: number[] = []
  head = 0

  /** Forgets the times at or before `since`; returns how many remain. */
  expire (since: number): number {
    while (this.head < this.times.length && (this.times[this.head] ?? Infinity) <= since) this.head++
    if (this.head > 64 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head)
      this.head = 0
    }
    return this.times.length - this.head
  }
}

export interface MemoryStoreOptions {
  clock: Clock
  maxRecordBytes?: number
  maxCounterKeys?: number
  maxInFlightMarks?: number
  maxHeldMarks?: number
}

/** The key, lru-cache's bookkeeping and the string's header, roughly: what an entry costs beyond its text. */
const ENTRY_OVERHEAD_BYTES = 256

function recordSize (record: PackedRecord): number {
  return ENTRY_OVERHEAD_BYTES + record.length
}

export function createMemoryStore (options: MemoryStoreOptions): StateStore {
  const { clock } = options
  // The clock is read on every call (ttlResolution 0): by default lru-cache keeps a reading for
  // 1 ms of real time, so a test that moves the clock would see expiry depend on the machine's speed.
  const timing = { perf: { now: () => clock.monotonicMs() }, ttlResolution: 0 }
  const records = new LRUCache<string, PackedRecord>({
    maxSize: options.maxRecordBytes ?? DEFAULT_MEMORY_RECORD_BYTES,
    sizeCalculation: recordSize,
    ttlAutopurge: false,
    ...timing,
  })
  // Bounded by count through maxSize (each entry counts 1), not `max`: lru-cache allocates its
  // index arrays for `max` entries up front, which every start and every idle sidecar would pay
  // for caches most deployments barely use.
  const counted = <V extends object | string | true>(bound: number): LRUCache.Options<string, V, unknown> => ({
    maxSize: bound,
    sizeCalculation: () => 1,
    ...timing,
  })
  // Marks apart from records: a transaction touches the large record cache twice (the lookup that
  // finds nothing, the record stored), the few marks in flight stay in a small one. A mark holds
  // its owner, a number no other claim of this store gets.
  const maxInFlightMarks = options.maxInFlightMarks ?? DEFAULT_MAX_IN_FLIGHT_MARKS
  const marks = new LRUCache<string, string>(counted(maxInFlightMarks))
  const maxHeldMarks = options.maxHeldMarks ?? DEFAULT_MAX_HELD_MARKS
  const held = new LRUCache<string, true>(counted(maxHeldMarks))
  let claims = 0
  let purgeAfterMs = -Infinity
  const maxCounterKeys = options.maxCounterKeys ?? DEFAULT_MEMORY_COUNTER_KEYS
  const windows = new LRUCache<string, SlidingLog>(counted(maxCounterKeys))
  const totals = new LRUCache<string, { total: bigint }>(counted(maxCounterKeys))
  // The names of amounts given back with `once`, each kept as long as its total.
  const givenBack = new LRUCache<string, true>(counted(maxCounterKeys))

  const status: StoreStatus = { kind: 'memory', ready: true }

  return {
    async claim (key, inFlightTtlMs): Promise<ClaimOutcome> {
      const recorded = records.get(key)
      if (recorded !== undefined) return { kind: 'recorded', record: unpackRecord(recorded) }
      if (marks.has(key)) return { kind: 'in-flight' }
      if (marks.size >= maxInFlightMarks) {
        // Expired marks count towards the size until touched. Dropping them walks every mark, so
        // at most once a second: refusals at the bound must stay cheap for the traffic around them.
        const now = clock.monotonicMs()
        if (now >= purgeAfterMs) {
          purgeAfterMs = now + STALE_MARKS_PURGE_INTERVAL_MS
          marks.purgeStale()
        }
        if (marks.size >= maxInFlightMarks) throw new StateUnavailableError(new Error(`${maxInFlightMarks} transactions in flight in this process`))
      }
      const owner = String(++claims)
      marks.set(key, owner, { ttl: inFlightTtlMs })
      return { kind: 'claimed', owner, held: held.has(key) }
    },

    async finish (key, owner, record, ttlMs) {
      if (marks.get(key) !== owner) return
      const packed = packRecord(record)
      marks.delete(key)
      // A record too large for the byte bound is refused by lru-cache, so a retry is forwarded.
      records.set(key, packed, { ttl: ttlMs })
    },

    async abort (key, owner) {
      if (marks.get(key) === owner) marks.delete(key)
    },

    async markHeld (key, ttlMs) {
      if (!held.has(key) && held.size >= maxHeldMarks) {
        // Holds are rare (a person decides each): dropping the expired ones at the bound is cheap enough.
        held.purgeStale()
        if (held.size >= maxHeldMarks) throw new StateUnavailableError(new Error(`${maxHeldMarks} references held for approval in this process`))
      }
      held.set(key, true, { ttl: ttlMs })
    },

    async hit (key, limit, windowMs): Promise<RateVerdict> {
      const now = clock.monotonicMs()
      const log = windows.get(key) ?? new SlidingLog()
      const count = log.expire(now - windowMs)
      const cap = Math.min(limit, MAX_RATE_WINDOW_ENTRIES)
      windows.set(key, log, { ttl: windowMs })
      if (count < cap) {
        log.times.push(now)
        return { admitted: true, retryAfterMs: 0 }
      }
      const oldest = log.times[log.times.length - cap] ?? now
      return { admitted: false, retryAfterMs: Math.max(1, Math.ceil(oldest + windowMs - now)) }
    },

    async reserve (key, amount, limit, ttlMs) {
      const current = totals.get(key)
      const total = (current?.total ?? 0n) + amount
      if (total > limit) return false
      if (current === undefined) totals.set(key, { total }, { ttl: ttlMs })
      else current.total = total
      return true
    },

    async release (key, amount, once) {
      const current = totals.get(key)
      if (current === undefined) return
      if (once !== undefined) {
        if (givenBack.has(once)) return
        const ttl = totals.getRemainingTTL(key)
        givenBack.set(once, true, Number.isFinite(ttl) && ttl > 0 ? { ttl } : {})
      }
      current.total = current.total > amount ? current.total - amount : 0n
    },

    async total (key) {
      return totals.get(key)?.total ?? 0n
    },

    status: () => ({ ...status }),
    async ping () {},
    async close () {
      records.clear()
      marks.clear()
      held.clear()
      windows.clear()
      totals.clear()
      givenBack.clear()
    },
  }
}

/**
 * A copy of its own, so a later write to the caller's buffer or headers cannot change a record.
 * Header values are latin1 as Node reads them, so latin1 keeps every byte of the head and the body;
 * one Buffer, decoded once, makes a flat string rather than a rope of two.
 */
function packRecord (record: IdempotencyRecord): PackedRecord {
  const head = `${record.status} ${record.fingerprint} ${JSON.stringify(record.headers)}\n`
  return Buffer.concat([Buffer.from(head, 'latin1'), record.body]).toString('latin1')
}

function unpackRecord (entry: PackedRecord): IdempotencyRecord {
  const end = entry.indexOf('\n')
  const [status = '', fingerprint = ''] = entry.slice(0, end).split(' ', 2)
  const headersAt = status.length + fingerprint.length + 2
  return {
    status: Number(status),
    fingerprint,
    headers: JSON.parse(entry.slice(headersAt, end)) as IdempotencyRecord['headers'],
    body: Buffer.from(entry.slice(end + 1), 'latin1'),
  }
}
