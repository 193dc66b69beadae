/**
 * The payments' store as everything above it meets it (SPEC §12 "Sealed"): every record written
 * is sealed (payment-seal.ts), and every record read is verified first. One that does not verify
 * is handed on as `unverified` (never its stored bytes), logged at `error` once per record and
 * process start, and counted while it is (the `payments_unverified` gauge). So no reader, the
 * worker, the routes, the commands or the console, can meet a state, an amount or a notification
 * that a seal does not vouch for: nothing is notified, reported final or made final from them.
 *
 * Queries by state ask the inner store by the stored state, which a hand-written record can lie
 * about: what a query returns is filtered again by the state each record is read as, and
 * `unverified` is answered by reading the newest UNVERIFIED_SCAN records the first time (a start
 * does it) or when a person's page asks (`rescan`), and otherwise from those this process has found
 * so, since no stored state says it: an API caller's query never costs a scan.
 */
import type { Logger } from 'pino'
import { withoutMark, type PaymentRecord, type PaymentState } from './payment-record.js'
import { sealPayment, unverifiedRecord, verifyPayment, type SealKey } from './payment-seal.js'
import type { PaymentCounts, PaymentQuery, PaymentStore } from './payment-store.js'

/** How many of the newest records a query for unverified ones reads. */
export const UNVERIFIED_SCAN = 10_000

export function sealedPaymentStore (inner: PaymentStore, key: SealKey, log: Logger): PaymentStore {
  const unverified = new Set<string>()

  const read = (record: PaymentRecord | null): PaymentRecord | null => {
    if (record === null) return null
    const why = verifyPayment(key, record)
    if (why === null) {
      unverified.delete(record.id)
      // The mark is never stored: one found in the store was written by hand.
      return withoutMark(record)
    }
    const shown = unverifiedRecord(record, why)
    if (!unverified.has(shown.id)) {
      unverified.add(shown.id)
      log.error({ payment: shown.id, reference: shown.externalReference, failed: why.failed, vouched: why.vouched },
        'payment record failed verification: never notified, never final but by a look-up of its sealed transaction id (was the store written by hand, or sealed with another PROXY_SEALING_SECRET?)')
    }
    return shown
  }
  const sealed = (record: PaymentRecord): PaymentRecord => {
    const rest = withoutMark(record)
    return { ...rest, seals: sealPayment(key, rest) }
  }
  // The stores find records by columns and indexes outside the sealed JSON: what they return is judged again by what it
  // is read as.
  const matches = (query: Omit<PaymentQuery, 'limit'>) => (r: PaymentRecord): boolean =>
    (query.state === undefined || r.state === query.state) &&
    (query.states === undefined || query.states.includes(r.state)) &&
    (query.caller === undefined || r.caller === query.caller) &&
    (query.sinceMs === undefined || r.createdAtMs >= query.sinceMs)
  const only = (
    record: PaymentRecord | null,
    holds: (r: PaymentRecord) => boolean,
  ): PaymentRecord | null => record !== null && holds(record) ? record : null
  const wants = (query: PaymentQuery, state: PaymentState): boolean => query.state === state ||
    (query.states?.includes(state) ?? false)

  let scannedOnce = false
  /**
   * The newest records are read once a process (a start, a command); after that, those found since are known by their
   * reads.
   */
  async function listUnverified (query: PaymentQuery): Promise<PaymentRecord[]> {
    const scanned = scannedOnce && query.rescan !== true ? [] : (await inner.list({
      caller: query.caller,
      sinceMs: query.sinceMs,
      limit: UNVERIFIED_SCAN,
    })).map((r) => read(r) as PaymentRecord)
    if (query.caller === undefined && query.sinceMs === undefined) scannedOnce = true
    const visible = (r: PaymentRecord | null): r is PaymentRecord => r !== null && r.state === 'unverified' && matches({ caller: query.caller, sinceMs: query.sinceMs })(r)
    const found = scanned.filter(visible)
    const seen = new Set(scanned.map((r) => r.id))
    for (const id of [...unverified].reverse()) {
      if (seen.has(id)) continue
      const record = read(await inner.get(id))
      if (visible(record)) found.push(record)
      else if (record === null) unverified.delete(id)
    }
    return found
  }

  return {
    async create (record) {
      const outcome = await inner.create(sealed(record))
      if (outcome.kind === 'created') return outcome
      const existing = read(outcome.record) as PaymentRecord
      // An index pointing the reference's §8 key at another payment would join this forward to it.
      if (existing.key !== record.key) throw new Error(`the payments store's key index names payment ${existing.id}, whose sealed key is another`)
      return { kind: 'exists', record: existing }
    },
    get: async (id) => only(read(await inner.get(id)), (r) => r.id === id),
    byKey: async (k) => only(read(await inner.byKey(k)), (r) => r.key === k),
    byReference: async (reference, filter) => only(read(await inner.byReference(reference, filter)), (r) =>
      r.externalReference === reference &&
      (filter.caller === undefined || r.caller === filter.caller) &&
      (filter.environment === undefined || r.environment === filter.environment)),
    byTransactionId: async (transactionId) => only(
      read(await inner.byTransactionId(transactionId)),
      (r) => r.transactionId === transactionId,
    ),
    update: async (record) => await inner.update(sealed(record)),
    remove: async (record) => await inner.remove(record),
    claimDue: async (nowMs, limit, leaseMs) => (await inner.claimDue(nowMs, limit, leaseMs)).map(
      (r) => read(r) as PaymentRecord,
    ),
    release: async (id) => { await inner.release(id) },
    async list (query) {
      const stored = query.state === 'unverified' ? [] : (await inner.list(query)).map((r) => read(r) as PaymentRecord).filter(matches(query))
      if (!wants(query, 'unverified')) return stored
      const seen = new Set(stored.map((r) => r.id))
      // Unverified ones first: they are the ones a person must look at.
      return [...(await listUnverified(query)).filter((r) => !seen.has(r.id)), ...stored].slice(0, query.limit)
    },
    async counts (): Promise<PaymentCounts> {
      return { ...await inner.counts(), unverified: unverified.size }
    },
    removeSettledBefore: async (beforeMs) => await inner.removeSettledBefore(beforeMs),
    cursor: async () => await inner.cursor(),
    advanceCursor: async (seq) => { await inner.advanceCursor(seq) },
    ready: () => inner.ready(),
    close: async () => { await inner.close() },
  }
}
