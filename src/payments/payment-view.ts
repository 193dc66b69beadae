/**
 * The payment object wherever it appears (SPEC §12: `GET /payments`, notifications, the CLI's
 * --json, MCP's tools): what the application and the agent may rely on, times in whole Unix seconds.
 * Never the §8 key, the schedule's internals or the notifications outstanding.
 */
import type { LookupOutcome, PaymentRecord, PaymentState, SettledBy } from './payment-record.js'

export interface PaymentView {
  id: string
  state: PaymentState
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
  events: Array<{ id: string, status: string | null, receivedAt: number, disputed: boolean }>
  lookups: { count: number, lastAt: number | null, lastOutcome: LookupOutcome | null, nextAt: number | null }
}

const seconds = (ms: number): number => Math.floor(ms / 1000)
const secondsOrNull = (ms: number | null): number | null => ms === null ? null : seconds(ms)

export function paymentView (r: PaymentRecord): PaymentView {
  return {
    id: r.id,
    state: r.state,
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
    events: r.events.map((e) => ({ id: e.id, status: e.status, receivedAt: seconds(e.receivedAtMs), disputed: e.disputed })),
    lookups: {
      count: r.lookups.count,
      lastAt: secondsOrNull(r.lookups.lastAtMs),
      lastOutcome: r.lookups.lastOutcome,
      // The schedule's next step (a look-up wanted at once, to confirm an event or for a recheck, comes before it).
      nextAt: r.state === 'pending' ? secondsOrNull(r.nextLookupAtMs) : null,
    },
  }
}
