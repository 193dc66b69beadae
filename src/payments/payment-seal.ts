/**
 * Sealed payment records (SPEC §12 "Sealed"): a payment's state is what the provider said, never
 * what the store says, so write access to the store is not the power to settle a payment.
 *
 * Three seals, each chained to the one before: `created`, when the record is first stored, over
 * everything that names the payment (id, §8 key, caller, environment, interface, method, path,
 * reference, amount, currency, creation time); `transaction` over the transaction id and where it
 * came from; `state` over every other field, the state, what settled it, the provider's status
 * text, the events, the look-ups, the schedule and the notifications due. Every write seals again
 * from a record that verified when it was read, so `created` never changes and a change of any
 * other field carries a new seal over the ones before it. The key is derived from the sealing
 * secret under a label of its own, so no approval seal verifies as a payment's.
 *
 * What a record that does not verify is read as: `unverified`, with only what its seals still vouch
 * for (`verifyPayment`, `unverifiedRecord`). What a seal cannot do: restore-proofing. Someone who can
 * write the store can put back a whole state the record really had; that tells nothing the provider
 * did not say, and a notification it brings back is the same notification, with the same id.
 */
import { deriveSealKey as deriveKey, sameSeal, seal, type SealKey } from '../sealing/seal-mac.js'
import { untouched, type PaymentRecord, type PaymentSeals, type Unverified } from './payment-record.js'
import { PAYMENT_ID } from '../objects/payment-id.js'

const LABEL = 'payments-auth-proxy payment seal v1'

export type { SealKey }

export function derivePaymentSealKey (sealingSecret: string): SealKey {
  return deriveKey(sealingSecret, LABEL)
}

const NAMING = ['id', 'key', 'caller', 'environment', 'interface', 'method', 'path', 'externalReference', 'amount', 'currency', 'createdAtMs'] as const
const STATE = ['state', 'providerStatus', 'sentAtMs', 'sender', 'rejoined', 'settledAtMs', 'settledBy', 'confirmed', 'events', 'lookups', 'scheduleFromMs', 'step', 'nextLookupAtMs', 'lookupNow', 'eventLookup', 'notify', 'dueAtMs'] as const

function createdSeal (key: SealKey, r: PaymentRecord): string {
  const named: unknown[] = ['created', r.id, r.key, r.caller, r.environment, r.interface, r.method, r.path, r.externalReference, r.amount, r.currency, r.createdAtMs]
  // Only when present, so a record sealed before amounts were kept verifies as it did, and one that had them loses
  // them only by failing its seal: an amount given back (SPEC §16) is one the sidecar counted.
  if (r.counted !== undefined) named.push(['counted', r.counted.map((c) => [c.key, c.units])])
  return seal(key, named)
}

function transactionSeal (key: SealKey, created: string, r: PaymentRecord): string | null {
  return r.transactionId === null ? null : seal(key, ['transaction', created, r.transactionId, r.transactionIdFrom])
}

function stateSeal (key: SealKey, before: string, r: PaymentRecord): string {
  return seal(key, [
    'state', before, r.state, r.providerStatus, r.sentAtMs, r.sender, r.rejoined, r.settledAtMs, r.settledBy, r.confirmed,
    r.events.map((e) => [e.id, e.status, e.receivedAtMs, e.disputed]),
    [r.lookups.count, r.lookups.lastAtMs, r.lookups.lastOutcome],
    r.scheduleFromMs,
    r.step,
    r.nextLookupAtMs,
    r.lookupNow,
    r.eventLookup === null ? null : [r.eventLookup.step, r.eventLookup.atMs],
    r.notify,
    r.dueAtMs,
  ])
}

/** The seals of `r` as it is to be written: computed from its fields, never from the seals it came with. */
export function sealPayment (key: SealKey, r: PaymentRecord): PaymentSeals {
  const created = createdSeal(key, r)
  const transaction = transactionSeal(key, created, r)
  return { created, transaction, state: stateSeal(key, transaction ?? created, r) }
}

/**
 * Null when every seal of the stored record verifies; else which link failed and what the seals
 * before it still vouch for. Any field of the wrong shape fails (a hand-written record can hold
 * anything), so nothing past this point meets a value its seal did not cover.
 */
export function verifyPayment (key: SealKey, r: PaymentRecord): Unverified | null {
  const seals = r.seals as unknown
  if (typeof seals !== 'object' || seals === null) return { failed: 'seals missing', vouched: 'nothing' }
  // A member removed reads as undefined, which JSON writes as the null it may have been sealed as.
  const missing = (names: ReadonlyArray<keyof PaymentRecord>): boolean => names.some((name) => !Object.hasOwn(r, name))
  if (missing(NAMING)) return { failed: 'created seal', vouched: 'nothing' }
  if (missing(['transactionId', 'transactionIdFrom'])) return { failed: 'transaction seal', vouched: 'naming' }
  const given = seals as Partial<Record<keyof PaymentSeals, unknown>>
  let created: string
  try {
    created = createdSeal(key, r)
  } catch {
    return { failed: 'created seal', vouched: 'nothing' }
  }
  if (!sameSeal(created, given.created) || !namesAreText(r)) return { failed: 'created seal', vouched: 'nothing' }
  let transaction: string | null
  try {
    transaction = transactionSeal(key, created, r)
  } catch {
    return { failed: 'transaction seal', vouched: 'naming' }
  }
  if (transaction === null ? given.transaction !== null : !sameSeal(transaction, given.transaction) || typeof r.transactionId !== 'string') {
    return { failed: 'transaction seal', vouched: 'naming' }
  }
  const vouched = transaction === null ? 'naming' : 'transaction'
  if (missing(STATE)) return { failed: 'state seal', vouched }
  let state: string
  try {
    state = stateSeal(key, transaction ?? created, r)
  } catch {
    return { failed: 'state seal', vouched }
  }
  return sameSeal(state, given.state) ? null : { failed: 'state seal', vouched }
}

function namesAreText (r: PaymentRecord): boolean {
  return PAYMENT_ID.test(r.id) && [r.key, r.caller, r.environment, r.interface, r.method, r.path, r.externalReference].every((v) => typeof v === 'string') &&
    (r.amount === null || typeof r.amount === 'string') && (r.currency === null || typeof r.currency === 'string') && Number.isSafeInteger(r.createdAtMs) &&
    (r.counted === undefined || r.counted.every((c) => typeof c.key === 'string' && typeof c.units === 'string' && /^[0-9]{1,19}$/.test(c.units)))
}

/**
 * What a record that failed verification is read as: state `unverified`, its id and reference (to
 * find it by), what the seals before the failed link vouch for, and nothing else: no events, no
 * look-ups, no notification due. It is never written back as it is (the stored bytes stay for the
 * operator to inspect); only a look-up of the vouched transaction id makes it a sealed record again.
 */
export function unverifiedRecord (r: PaymentRecord, why: Unverified): PaymentRecord {
  const naming = why.vouched !== 'nothing'
  const text = (value: unknown): string => typeof value === 'string' ? value : ''
  const createdAtMs = naming ? r.createdAtMs : 0
  return {
    id: text(r.id),
    key: naming ? r.key : '',
    version: Number.isSafeInteger(r.version) ? r.version : 0,
    state: 'unverified',
    providerStatus: null,
    caller: naming ? r.caller : '',
    environment: naming ? r.environment : '',
    interface: naming ? r.interface : '',
    method: naming ? r.method : '',
    path: naming ? r.path : '',
    externalReference: text(r.externalReference),
    transactionId: why.vouched === 'transaction' ? r.transactionId : null,
    transactionIdFrom: why.vouched === 'transaction' ? r.transactionIdFrom : null,
    amount: naming ? r.amount : null,
    currency: naming ? r.currency : null,
    createdAtMs,
    sender: '',
    ...untouched(createdAtMs),
    unverified: why,
  }
}
