/**
 * The payment object wherever it appears (SPEC §12: `GET /payments`, notifications, the CLI's
 * --json, MCP's tools): what the application and the agent may rely on, times in whole Unix seconds.
 * Never the §8 key, the schedule's internals or the notifications outstanding. A record read as
 * `unverified` (payment-seal.ts) shows its id and reference, what its seals still vouch for, and
 * null for everything else: nothing a person or the application is told comes from an unsealed byte.
 */
import type { LookupOutcome, PaymentRecord, PaymentState, SettledBy } from './payment-record.js'

export interface SealedPaymentView {
  id: string
  state: Exclude<PaymentState, 'unverified'>
  providerStatus: string | null
  caller: string
  environment: string
  interface: string
  method: string
  path: string
  externalReference: string
  transactionId: string | null
  amount: string | null
  currency: string | null
  createdAt: number
  settledAt: number | null
  settledBy: SettledBy | null
  /** SPEC §12 "Settled by an event alone": true only when the provider's own answer or look-up made it final. */
  confirmed: boolean
  events: Array<{ id: string, status: string | null, receivedAt: number, disputed: boolean }>
  lookups: { count: number, lastAt: number | null, lastOutcome: LookupOutcome | null, nextAt: number | null }
}

type Unvouched<T> = { [K in keyof T]: T[K] | null }

export type UnverifiedPaymentView = Unvouched<Omit<SealedPaymentView, 'id' | 'state' | 'externalReference' | 'confirmed'>> & {
  id: string
  state: 'unverified'
  externalReference: string
  confirmed: false
}

export type PaymentView = SealedPaymentView | UnverifiedPaymentView

const seconds = (ms: number): number => Math.floor(ms / 1000)
const secondsOrNull = (ms: number | null): number | null => ms === null ? null : seconds(ms)

export function paymentView (r: PaymentRecord): PaymentView {
  return r.state === 'unverified' ? unverifiedView(r) : sealedView(r, r.state)
}

function unverifiedView (r: PaymentRecord): UnverifiedPaymentView {
  const naming = r.unverified?.vouched === 'naming' || r.unverified?.vouched === 'transaction'
  const vouched = <T>(value: T): T | null => naming ? value : null
  return {
    id: r.id,
    state: 'unverified',
    providerStatus: null,
    caller: vouched(r.caller),
    environment: vouched(r.environment),
    interface: vouched(r.interface),
    method: vouched(r.method),
    path: vouched(r.path),
    externalReference: r.externalReference,
    transactionId: r.unverified?.vouched === 'transaction' ? r.transactionId : null,
    amount: vouched(r.amount),
    currency: vouched(r.currency),
    createdAt: naming ? seconds(r.createdAtMs) : null,
    settledAt: null,
    settledBy: null,
    confirmed: false,
    events: null,
    lookups: null,
  }
}

function sealedView (r: PaymentRecord, state: SealedPaymentView['state']): SealedPaymentView {
  return {
    id: r.id,
    state,
    providerStatus: r.providerStatus,
    caller: r.caller,
    environment: r.environment,
    interface: r.interface,
    method: r.method,
    path: r.path,
    externalReference: r.externalReference,
    transactionId: r.transactionId,
    amount: r.amount,
    currency: r.currency,
    createdAt: seconds(r.createdAtMs),
    settledAt: secondsOrNull(r.settledAtMs),
    settledBy: r.settledBy,
    confirmed: r.confirmed,
    events: r.events.map((e) => ({
      id: e.id,
      status: e.status,
      receivedAt: seconds(e.receivedAtMs),
      disputed: e.disputed,
    })),
    lookups: {
      count: r.lookups.count,
      lastAt: secondsOrNull(r.lookups.lastAtMs),
      lastOutcome: r.lookups.lastOutcome,
      // The schedule's next step (a look-up wanted at once, to confirm an event or for a recheck, comes before it).
      nextAt: r.state === 'pending' ? secondsOrNull(r.nextLookupAtMs) : null,
    },
  }
}
