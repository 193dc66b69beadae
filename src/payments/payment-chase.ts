/**
 * The payments a person chases (SPEC §14 over §12): stale ones (not final after the last look-up)
 * and unknown ones (a forward with no answer), a page at a time with their total, newest first, and
 * the recheck `payments recheck` makes, acted on at once by this sidecar's worker. process/serve.ts hands it
 * to the console, which imports nothing of payments.
 *
 * Stale and unknown payments are few (each is an alert), so a page is read as the newest
 * `offset + limit` of the states asked for, in the store's own order (its sequence, not the replicas'
 * clocks, so a page neither skips nor repeats a payment): no store needs a cursor for it.
 */
import { isFinal, type PaymentRecord, type PaymentState } from './payment-record.js'
import type { PaymentStore } from './payment-store.js'
import type { ApplyInput } from './payment-updater.js'
import { paymentView, type PaymentView } from './payment-view.js'
import { PAYMENT_ID } from '../objects/payment-id.js'

export type ChasedState = 'stale' | 'unknown' | 'unverified'

export interface PaymentChase {
  list: (
    query: { states: readonly ChasedState[], offset: number, limit: number },
  ) => Promise<{ payments: PaymentView[], total: number }>
  /**
   * A page of every payment, or of those in one state, newest first; `more` when another page follows. No total: the
   * store counts only the states a person chases, and a page is read as the newest `offset + limit + 1`.
   */
  browse: (
    query: { state: PaymentState | null, offset: number, limit: number },
  ) => Promise<{ payments: PaymentView[], more: boolean }>
  /** The payments a person's search names: by payment id, by reference (the newest with it) or by transaction id. */
  find: (text: string) => Promise<PaymentView[]>
  get: (id: string) => Promise<PaymentView | null>
  /** The payment as it stands once its recheck is scheduled (a final one, unchanged); null when there is none. */
  recheck: (id: string) => Promise<PaymentView | null>
}

export function createPaymentChase (store: PaymentStore, apply: ApplyInput, wake: () => void): PaymentChase {
  return {
    async list ({ states, offset, limit }) {
      // The list first: reading it is what finds unverified records, which the count then includes.
      const newest = await store.list({ states, limit: offset + limit, rescan: true })
      const counts = await store.counts()
      const payments = newest.slice(offset, offset + limit).map(paymentView)
      return { payments, total: states.reduce((sum, state) => sum + counts[state], 0) }
    },
    async browse ({ state, offset, limit }) {
      const newest = await store.list({ ...(state === null ? {} : { state }), limit: offset + limit + 1, rescan: true })
      return { payments: newest.slice(offset, offset + limit).map(paymentView), more: newest.length > offset + limit }
    },
    async find (text) {
      const found = await Promise.all([
        PAYMENT_ID.test(text) ? store.get(text) : null,
        store.byReference(text, {}),
        store.byTransactionId(text),
      ])
      const unique = new Map<string, PaymentRecord>()
      for (const record of found) if (record !== null) unique.set(record.id, record)
      return [...unique.values()].map(paymentView)
    },
    async get (id) {
      const record = PAYMENT_ID.test(id) ? await store.get(id) : null
      return record === null ? null : paymentView(record)
    },
    async recheck (id) {
      const payment = await store.get(id)
      if (payment === null) return null
      if (isFinal(payment.state)) return paymentView(payment)
      const { record } = await apply(payment, { kind: 'recheck' })
      wake()
      return paymentView(record ?? payment)
    },
  }
}
