/** A payment record and a machine context for the pure tests, with every field set and overridable. */
import type { MachineContext, StatusClass } from '../../src/payments/payment-machine.js'
import { untouched, type PaymentRecord } from '../../src/payments/payment-record.js'

export const T0 = 1_767_225_600_000
export const SCHEDULE_MS = [60_000, 300_000, 86_400_000]
export const IN_FLIGHT_MS = 65_000

export function classify (status: string | null): StatusClass {
  const s = status?.toLowerCase()
  if (s === 'successful' || s === 'success') return 'succeeded'
  if (s === 'failed' || s === 'reversed') return 'failed'
  return 'pending'
}

export function context (overrides: Partial<MachineContext> = {}): MachineContext {
  return {
    nowMs: T0 + 10_000,
    random: 0,
    scheduleMs: SCHEDULE_MS,
    inFlightMs: IN_FLIGHT_MS,
    canLookUp: (r) => r.transactionId !== null,
    confirmByLookup: () => true,
    classify,
    eventLookupAtMs: overrides.nowMs ?? T0 + 10_000,
    ...overrides,
  }
}

export function paymentFixture (overrides: Partial<PaymentRecord> = {}): PaymentRecord {
  return {
    id: 'pay_AAAAAAAAAAAAAAAAAAAAAA',
    key: 'k1',
    version: 1,
    state: 'sending',
    providerStatus: null,
    caller: 'anonymous',
    environment: 'sandbox',
    interface: 'fiat',
    method: 'POST',
    path: '/v1/payouts',
    externalReference: 'ref-1',
    transactionId: null,
    transactionIdFrom: null,
    amount: '100',
    currency: 'KES',
    createdAtMs: T0,
    sender: 'process-1',
    ...untouched(T0),
    nextLookupAtMs: T0 + 60_000,
    dueAtMs: T0 + IN_FLIGHT_MS,
    ...overrides,
  }
}
