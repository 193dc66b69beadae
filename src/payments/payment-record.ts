/**
 * A followed payment as stored (SPEC §12): what the application and the agent see (the payment
 * object, payment-view.ts), and what the sidecar needs to follow it: the reference's §8 record key
 * (a later forward of the same reference joins the record), the look-up schedule, the notifications
 * decided but not yet stored, and `dueAtMs`, the time the worker must next act on it, which the
 * stores index. Times are wall-clock Unix milliseconds here, whole seconds in the payment object.
 */
/** `unverified` is never stored: it is what a record whose seals do not verify is read as (payment-seal.ts). */
export const PAYMENT_STATES = ['sending', 'unknown', 'pending', 'succeeded', 'failed', 'stale', 'unverified'] as const
export type PaymentState = typeof PAYMENT_STATES[number]
export type FinalState = 'succeeded' | 'failed'
export type SettledBy = 'answer' | 'event' | 'lookup'
export type LookupOutcome = 'final' | 'pending' | 'failed'
export const NOTIFICATION_TYPES = ['payment.succeeded', 'payment.failed', 'payment.stale'] as const
export type NotificationType = typeof NOTIFICATION_TYPES[number]

export interface PaymentEvent {
  /** The inbox's event id (`msg_…`): the `webhook-id` the application received it with. */
  id: string
  status: string | null
  receivedAtMs: number
  /** Its final status disagrees with the payment's final state. */
  disputed: boolean
}

/**
 * The seals of a stored record (SPEC §12 "Sealed"), each chained to the one before: `created` over
 * what names the payment, `transaction` over the transaction id and where it came from, `state`
 * over everything else. Written by the sealed store on every write; null on a record not yet stored.
 */
export interface PaymentSeals { created: string, transaction: string | null, state: string }

/** Of a record read as `unverified`: which link failed (for the log), and how much of it the seals still vouch for. */
export interface Unverified {
  failed: string
  /** `naming`: what names the payment (the created seal holds); `transaction`: that and its transaction id too. */
  vouched: 'nothing' | 'naming' | 'transaction'
}

/** An amount reserved against a day's total: the state store's key (which names the day) and integer units. */
export interface CountedAmount { key: string, units: string }

export interface PaymentRecord {
  id: string
  /** The §8 record key of the forward (caller, environment, interface, method, path, reference; hashed). */
  key: string
  /** Written by the stores: an update names the version it read, so two writers never overwrite each other. */
  version: number
  state: PaymentState
  providerStatus: string | null
  caller: string
  environment: string
  interface: string
  method: string
  /** Below the interface base, as sent. */
  path: string
  externalReference: string
  transactionId: string | null
  /** Where the transaction id came from: an event's may be forged until a look-up names our reference. */
  transactionIdFrom: 'answer' | 'event' | null
  amount: string | null
  currency: string | null
  /**
   * What the forward counted against its caller's day totals (SPEC §7), given back once if it fails
   * (SPEC §16); absent when it counted nothing (and on records written before it was kept).
   */
  counted?: CountedAmount[]
  createdAtMs: number
  /** When the forward of `sending` was sent; the process that sent it (a restart orphans it). */
  sentAtMs: number
  sender: string
  /** A later forward joined the record after `unknown`: the transaction may exist, so no answer drops it. */
  rejoined: boolean
  settledAtMs: number | null
  settledBy: SettledBy | null
  /**
   * Final by the provider's own word (an answer, a look-up, or an event a look-up agreed with); false for an event
   * alone, and until final.
   */
  confirmed: boolean
  events: PaymentEvent[]
  lookups: { count: number, lastAtMs: number | null, lastOutcome: LookupOutcome | null }
  /** The schedule is counted from here (creation, or the last recheck); `step` indexes its next step. */
  scheduleFromMs: number
  step: number
  /** When the next step's look-up is due (jitter included); null when none is left or none can be made. */
  nextLookupAtMs: number | null
  /** A look-up is wanted now, ahead of the schedule: a final event to confirm, or a recheck. */
  lookupNow: boolean
  /**
   * The look-up an event asked for in this step of the schedule (SPEC §12 "Look-ups asked by
   * events"): one per step, due from when it was asked, so a flood of events asks for no more and
   * never goes before a scheduled look-up that was due earlier.
   */
  eventLookup: { step: number, atMs: number } | null
  /** Notifications decided, not yet stored in the notification outbox. */
  notify: NotificationType[]
  /** When the worker must act next (0: at once, null: never); the stores index it. */
  dueAtMs: number | null
  seals: PaymentSeals | null
  /** Set only on a record read as `unverified`; never stored. */
  unverified?: Unverified
}

export const FINAL_STATES: ReadonlySet<PaymentState> = new Set(['succeeded', 'failed'])

export function isFinal (state: PaymentState): state is FinalState {
  return FINAL_STATES.has(state)
}

/**
 * What a record holds before anything has happened to it since `atMs`: no answer, event, look-up or notification;
 * unsealed.
 */
export function untouched (atMs: number): Pick<PaymentRecord, 'sentAtMs' | 'rejoined' | 'settledAtMs' | 'settledBy' | 'confirmed' | 'events' | 'lookups' |
  'scheduleFromMs' | 'step' | 'nextLookupAtMs' | 'lookupNow' | 'eventLookup' | 'notify' | 'dueAtMs' | 'seals'> {
  return {
    sentAtMs: atMs,
    rejoined: false,
    settledAtMs: null,
    settledBy: null,
    confirmed: false,
    events: [],
    lookups: { count: 0, lastAtMs: null, lastOutcome: null },
    scheduleFromMs: atMs,
    step: 0,
    nextLookupAtMs: null,
    lookupNow: false,
    eventLookup: null,
    notify: [],
    dueAtMs: null,
    seals: null,
  }
}

/** The record without its `unverified` mark, which is never stored. */
export function withoutMark (r: PaymentRecord): PaymentRecord {
  const copy = { ...r }
  delete copy.unverified
  return copy
}
