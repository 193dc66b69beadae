/**
 * Carries out the state machine on the store (SPEC §12): applies an input to a record and writes
 * the result under the version it read; when another writer came first (an event and a look-up at
 * once, two replicas), it reads the record again and applies the same input to what is there. The
 * machine is pure, so the second reading decides right: a payment is settled once, notified once.
 * Every step is logged at info (warn for what an operator must look at) with the payment id, the
 * caller and the reference, and counted.
 */
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { ContextFor } from './payment-context.js'
import { applyInput, type PaymentInput, type PaymentStep } from './payment-machine.js'
import type { PaymentMetrics } from './payment-metrics.js'
import type { PaymentRecord } from './payment-record.js'
import type { PaymentStore } from './payment-store.js'

/** Another writer coming first this many times in a row is not contention but a fault. */
const MAX_ATTEMPTS = 8

export interface Applied {
  /** What is stored now; null when the record was removed (dropped) or is gone. */
  record: PaymentRecord | null
  /** False when the input changed nothing, so nothing was written (a lease held on it is still held). */
  written: boolean
}

export type ApplyInput = (record: PaymentRecord, input: PaymentInput) => Promise<Applied>

export function createPaymentUpdater (
  deps: { store: PaymentStore, context: ContextFor, clock: Clock, log: Logger, metrics: PaymentMetrics },
): ApplyInput {
  const { store, context, clock } = deps
  const observe = observer(deps.log, deps.metrics)
  return async function apply (record, input) {
    let current = record
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const { record: next, steps } = applyInput(current, input, context(clock.wallMs()))
      if (next === null) {
        if (await store.remove(current)) {
          observe(current, steps)
          return { record: null, written: true }
        }
      } else if (JSON.stringify(next) === JSON.stringify(current)) {
        return { record: current, written: false }
      } else {
        const written = await store.update(next)
        if (written !== null) {
          observe(written, steps)
          return { record: written, written: true }
        }
      }
      const again = await store.get(current.id)
      if (again === null) return { record: null, written: false }
      current = again
    }
    throw new Error(`payment ${record.id} was changed by another writer ${MAX_ATTEMPTS} times in a row`)
  }
}

function observer (
  log: Logger,
  metrics: PaymentMetrics,
): (record: PaymentRecord, steps: readonly PaymentStep[]) => void {
  return (record, steps) => {
    const fields = { payment: record.id, caller: record.caller, reference: record.externalReference }
    for (const step of steps) {
      switch (step.kind) {
        case 'followed':
          metrics.tracked('followed')
          log.info({ ...fields, transactionId: record.transactionId, state: record.state }, 'payment followed')
          break
        case 'settled_at_once':
          metrics.tracked('settled_at_once')
          break
        case 'untracked':
          metrics.tracked('untracked')
          log.warn({ ...fields, path: record.path, reason: step.reason }, 'payment not followed: the provider\'s answer has no usable transaction id')
          break
        case 'dropped':
          log.info({ ...fields, reason: step.reason }, 'payment record dropped: no transaction happened')
          break
        case 'unknown':
          metrics.tracked('unknown')
          log.warn(fields, 'payment unknown: no answer from the provider (the transaction may exist); a forward of the same reference or an event joins it')
          break
        case 'rejoined':
          log.info(fields, 'payment joined by a later forward of its reference')
          break
        case 'settled':
          metrics.settled(step.by, step.seconds)
          log.info({ ...fields, state: step.state, settledBy: step.by, providerStatus: record.providerStatus, transactionId: record.transactionId }, 'payment settled')
          break
        case 'disputed':
          metrics.event('disputed')
          log.warn({ ...fields, event: step.eventId, state: record.state }, 'payment event disputed: its final status disagrees with the payment\'s final state, which stands')
          break
        case 'confirming':
          log.info({ ...fields, event: step.eventId }, 'payment event with a final status: confirming with a look-up')
          break
        case 'stale':
          log.warn({ ...fields, transactionId: record.transactionId, state: 'stale' }, 'payment stale: still not final after the last look-up step')
          break
        case 'resealed':
          log.warn({ ...fields, transactionId: record.transactionId, state: step.state }, 'unverified payment record sealed again from the provider\'s answer to a look-up of its sealed transaction id')
          break
        case 'rechecked':
          log.info({ ...fields, state: record.state }, 'payment rechecked: looked up again, on the schedule counted from now')
          break
      }
    }
  }
}
