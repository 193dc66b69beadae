/**
 * The payment state machine (SPEC §12), a pure function: a record and one input (the provider's
 * answer to the forward, a later forward of the same reference, an event, a look-up, a recheck,
 * the passing of time, notifications stored) -> the next record (null: dropped) and the steps to
 * log and count. Nothing here reads a clock, a store or a socket; the context carries the time, the
 * jitter and the settings, so every pair of state and input is table-tested.
 *
 * The rules that make it safe: a final state never changes again (later events are recorded, and
 * marked disputed when they disagree); a final event settles only once a look-up agrees, unless
 * confirmation by events is configured for the record's interface (or it has no look-up); a record
 * whose transaction may exist (`unknown`, joined after it, or named by an event) is never dropped.
 */
import { isFinal, withoutMark, type FinalState, type LookupOutcome, type NotificationType, type PaymentEvent, type PaymentRecord, type PaymentState, type SettledBy } from './payment-record.js'

export type StatusClass = FinalState | 'pending'

export interface MachineContext {
  nowMs: number
  /** In [0, 1): stretches the next step by up to JITTER. */
  random: number
  /** Look-up times counted from `scheduleFromMs`, increasing. */
  scheduleMs: readonly number[]
  /** The longest a forward can be in flight (the §8 claim's lifetime): `sending` is `unknown` after it. */
  inFlightMs: number
  /** The record's interface has a look-up path, and the values it needs are known. */
  canLookUp: (record: PaymentRecord) => boolean
  /** A final event waits for a look-up that agrees (PROXY_PAYMENTS_CONFIRM=lookup and a look-up path). */
  confirmByLookup: (record: PaymentRecord) => boolean
  classify: (status: string | null) => StatusClass
  /** When a look-up an event asks for now would be due (event-lookup-pacer.ts): `nowMs` or a later slot. */
  eventLookupAtMs: number
}

/** How the provider answered a followed forward, read once at the edge (provider-reading.ts). */
export type ProviderAnswer =
  /** 2xx with a transaction id. */
  | { kind: 'followed', transactionId: string, providerStatus: string | null }
  /** 2xx without a usable transaction id. */
  | { kind: 'untracked', reason: string }
  /** 4xx: no transaction happened. */
  | { kind: 'refused', status: number }
  /** 5xx, a redirect, the proxy's own 502/504, a lost connection: the transaction may exist. */
  | { kind: 'lost' }
  /** The proxy refused before sending (no token, shutting down): nothing reached the provider. */
  | { kind: 'not-forwarded' }

export interface MatchedEvent { id: string, transactionId: string | null, status: string | null, receivedAtMs: number }

export type LookupResult =
  | { kind: 'final', state: FinalState, status: string }
  | { kind: 'pending', status: string | null }
  | { kind: 'failed', reason: string }

export type PaymentInput =
  | { kind: 'answer', answer: ProviderAnswer }
  | { kind: 'rejoin', sender: string }
  | { kind: 'event', event: MatchedEvent }
  | { kind: 'lookup', result: LookupResult, startedAtMs: number }
  | { kind: 'recheck' }
  /** `orphaned`: the process that sent a `sending` record is known to be gone (a restart on a store it owned alone). */
  | { kind: 'time', orphaned: boolean }
  | { kind: 'notified', types: readonly NotificationType[] }

export type PaymentStep =
  | { kind: 'followed' }
  | { kind: 'settled_at_once' }
  | { kind: 'untracked', reason: string }
  | { kind: 'dropped', reason: string }
  | { kind: 'unknown' }
  | { kind: 'rejoined' }
  | { kind: 'settled', state: FinalState, by: SettledBy, seconds: number }
  | { kind: 'disputed', eventId: string }
  | { kind: 'confirming', eventId: string }
  | { kind: 'stale' }
  | { kind: 'rechecked' }
  /**
   * A record read as unverified is sealed again from the provider's answer to a look-up of its vouched transaction id.
   */
  | { kind: 'resealed', state: PaymentState }

export interface Transition { record: PaymentRecord | null, steps: PaymentStep[] }

export const JITTER = 0.1
/** Events kept per payment; later ones still count and settle, they are only not listed. */
export const MAX_EVENTS = 100

export function applyInput (record: PaymentRecord, input: PaymentInput, ctx: MachineContext): Transition {
  const t = transition(record, input, ctx)
  return t.record === null ? t : { record: withDue(t.record, ctx), steps: t.steps }
}

function transition (r: PaymentRecord, input: PaymentInput, ctx: MachineContext): Transition {
  // Nothing a record that failed verification holds is believed: only the provider's answer about its vouched
  // transaction id.
  if (r.state === 'unverified') return input.kind === 'lookup' ? lookedUpUnverified(r, input.result, input.startedAtMs, ctx) : same(r)
  switch (input.kind) {
    case 'answer': return answered(r, input.answer, ctx)
    case 'rejoin': return rejoined(r, input.sender, ctx)
    case 'event': return evented(r, input.event, ctx)
    case 'lookup': return lookedUp(r, input.result, input.startedAtMs, ctx)
    case 'recheck': return rechecked(r, ctx)
    case 'time': return timed(r, input.orphaned, ctx)
    case 'notified': return same({ ...r, notify: r.notify.filter((type) => !input.types.includes(type)) })
  }
}

/** A new record's due time, as every transition leaves one. */
export function initial (r: PaymentRecord, ctx: MachineContext): PaymentRecord {
  return withDue(r, ctx)
}

function same (r: PaymentRecord, steps: PaymentStep[] = []): Transition {
  return { record: r, steps }
}

/** Not yet followed, or followed without a transaction id: a transaction id makes it `pending`. */
function awaitsId (r: PaymentRecord): boolean {
  return r.state === 'sending' || r.state === 'unknown' || (r.state === 'stale' && r.transactionId === null)
}

/**
 * `pending` on the schedule counted from its creation (or recheck); one that learns its transaction
 * id after every step has passed (joined a day later) is looked up once at least.
 */
function followed (r: PaymentRecord, ctx: MachineContext): PaymentRecord {
  const next = nextStep(r.scheduleFromMs, 0, ctx)
  return { ...r, state: 'pending', ...next, lookupNow: r.lookupNow || next.nextLookupAtMs === null }
}

/** Where a forward that settled nothing leaves a `sending` record. */
function fallback (r: PaymentRecord): Transition {
  if (r.transactionId !== null) return same({ ...r, state: 'pending' })
  return same({ ...r, state: 'unknown' }, [{ kind: 'unknown' }])
}

/** Nothing says a transaction exists: no answer with an id, no event, no earlier forward that may have made one. */
function droppable (r: PaymentRecord): boolean {
  return !r.rejoined && r.events.length === 0 && r.transactionId === null
}

function answered (r: PaymentRecord, answer: ProviderAnswer, ctx: MachineContext): Transition {
  if (isFinal(r.state)) return same(r)
  if (answer.kind === 'followed') {
    const base: PaymentRecord = { ...r, transactionId: answer.transactionId, transactionIdFrom: 'answer', providerStatus: answer.providerStatus ?? r.providerStatus }
    const cls = ctx.classify(answer.providerStatus)
    if (cls !== 'pending') {
      const settled = settle(base, cls, 'answer', true, ctx)
      return { record: settled.record, steps: [{ kind: 'settled_at_once' }, ...settled.steps] }
    }
    if (!awaitsId(r)) return same(base)
    return same(followed(base, ctx), [{ kind: 'followed' }])
  }
  if (r.state !== 'sending') return same(r)
  if (answer.kind === 'lost' || !droppable(r)) return fallback(r)
  if (answer.kind === 'untracked') return { record: null, steps: [{ kind: 'untracked', reason: answer.reason }] }
  return { record: null, steps: [{ kind: 'dropped', reason: answer.kind === 'refused' ? `the provider answered ${answer.status}` : 'not forwarded' }] }
}

function rejoined (r: PaymentRecord, sender: string, ctx: MachineContext): Transition {
  if (!awaitsId(r)) return same(r)
  return same({ ...r, state: 'sending', sentAtMs: ctx.nowMs, sender, rejoined: true }, [{ kind: 'rejoined' }])
}

function evented (r: PaymentRecord, event: MatchedEvent, ctx: MachineContext): Transition {
  if (r.events.some((e) => e.id === event.id)) return same(r)
  const cls = ctx.classify(event.status)
  const disputed = isFinal(r.state) && cls !== 'pending' && cls !== r.state
  const entry: PaymentEvent = { id: event.id, status: event.status, receivedAtMs: event.receivedAtMs, disputed }
  const events = r.events.length < MAX_EVENTS ? [...r.events, entry] : r.events
  if (isFinal(r.state)) return same({ ...r, events }, disputed ? [{ kind: 'disputed', eventId: event.id }] : [])
  let base: PaymentRecord = { ...r, events, providerStatus: event.status ?? r.providerStatus }
  const steps: PaymentStep[] = []
  if (r.transactionId === null && event.transactionId !== null) {
    base = { ...base, transactionId: event.transactionId, transactionIdFrom: 'event' }
    if (r.state !== 'sending') {
      base = followed(base, ctx)
      steps.push({ kind: 'followed' })
    }
  }
  if (cls === 'pending') return same(base, steps)
  if (!ctx.confirmByLookup(base)) {
    const settled = settle(base, cls, 'event', false, ctx)
    return { record: settled.record, steps: [...steps, ...settled.steps] }
  }
  // One look-up per step of the schedule, however many events ask: the rest are recorded, and the step's own look-up
  // follows.
  if (base.eventLookup !== null && base.eventLookup.step === base.step) return same(base, steps)
  return same({ ...base, lookupNow: true, eventLookup: { step: base.step, atMs: ctx.eventLookupAtMs } }, [...steps, { kind: 'confirming', eventId: event.id }])
}

function lookedUp (r: PaymentRecord, result: LookupResult, startedAtMs: number, ctx: MachineContext): Transition {
  const outcome: LookupOutcome = result.kind
  const base: PaymentRecord = {
    ...r,
    lookups: { count: r.lookups.count + 1, lastAtMs: startedAtMs, lastOutcome: outcome },
  }
  if (r.state !== 'pending' && r.state !== 'stale') return same(base)
  if (result.kind === 'final') {
    const confirmed = r.events.some((e) => !e.disputed && ctx.classify(e.status) === result.state)
    return settle({ ...base, providerStatus: result.status }, result.state, confirmed ? 'event' : 'lookup', true, ctx)
  }
  const status = result.kind === 'pending' ? result.status ?? r.providerStatus : r.providerStatus
  // A look-up ahead of the schedule (a final event, a recheck) leaves the step it did not reach.
  const consumed = r.nextLookupAtMs !== null && r.nextLookupAtMs <= startedAtMs
  const next = consumed
    ? nextStep(r.scheduleFromMs, r.step + 1, ctx)
    : { step: r.step, nextLookupAtMs: r.nextLookupAtMs }
  const after: PaymentRecord = { ...base, providerStatus: status, lookupNow: false, ...next }
  if (r.state === 'pending' && next.nextLookupAtMs === null) return stale(after)
  return same(after)
}

/**
 * A look-up of an unverified record's vouched transaction id: a readable answer makes it a sealed
 * record again, built from what its seals vouched for and what the provider said, pending on the
 * schedule counted from its creation or final (and notified). A failed look-up changes nothing.
 */
function lookedUpUnverified (
  r: PaymentRecord,
  result: LookupResult,
  startedAtMs: number,
  ctx: MachineContext,
): Transition {
  if (r.unverified?.vouched !== 'transaction' || result.kind === 'failed') return same(r)
  const rebuilt = followed(withoutMark({ ...r, state: 'pending' }), ctx)
  const t = lookedUp({ ...rebuilt, lookupNow: false }, result, startedAtMs, ctx)
  return t.record === null ? t : { record: t.record, steps: [{ kind: 'resealed', state: t.record.state }, ...t.steps] }
}

function rechecked (r: PaymentRecord, ctx: MachineContext): Transition {
  if (isFinal(r.state)) return same(r)
  const base: PaymentRecord = { ...r, scheduleFromMs: ctx.nowMs, eventLookup: null, ...nextStep(ctx.nowMs, 0, ctx) }
  const state: PaymentState = r.state === 'stale' ? (r.transactionId === null ? 'unknown' : 'pending') : r.state
  return same({ ...base, state, lookupNow: ctx.canLookUp(base) }, [{ kind: 'rechecked' }])
}

function timed (r: PaymentRecord, orphaned: boolean, ctx: MachineContext): Transition {
  const now = ctx.nowMs
  if (r.state === 'sending') return orphaned || now >= r.sentAtMs + ctx.inFlightMs ? fallback(r) : same(r)
  const staleAt = staleAtMs(r, ctx)
  if (r.state === 'unknown') return now >= staleAt ? stale(r) : same(r)
  if (r.state !== 'pending') return same(r)
  const lookups = ctx.canLookUp(r)
  if ((!lookups && now >= staleAt) || (lookups && r.nextLookupAtMs === null && !r.lookupNow)) return stale(r)
  return same(r)
}

/**
 * Events are marked disputed only here and once final (`evented`): a record being settled has none
 * yet. `confirmed`: the provider's own word settled it (an answer, a look-up), not an event alone.
 */
function settle (
  r: PaymentRecord,
  state: FinalState,
  by: SettledBy,
  confirmed: boolean,
  ctx: MachineContext,
): Transition {
  const steps: PaymentStep[] = []
  const events = r.events.map((e) => {
    const cls = ctx.classify(e.status)
    if (cls === 'pending' || cls === state) return e
    steps.push({ kind: 'disputed', eventId: e.id })
    return { ...e, disputed: true }
  })
  const record: PaymentRecord = {
    ...r, state, settledAtMs: ctx.nowMs, settledBy: by, confirmed, events, lookupNow: false, nextLookupAtMs: null, notify: withType(r.notify, `payment.${state}`),
  }
  return { record, steps: [{ kind: 'settled', state, by, seconds: Math.max(0, (ctx.nowMs - r.createdAtMs) / 1000) }, ...steps] }
}

function stale (r: PaymentRecord): Transition {
  return same({ ...r, state: 'stale', lookupNow: false, nextLookupAtMs: null, notify: withType(r.notify, 'payment.stale') }, [{ kind: 'stale' }])
}

function withType (types: readonly NotificationType[], type: NotificationType): NotificationType[] {
  return types.includes(type) ? [...types] : [...types, type]
}

/** The first step from `from` whose time (jitter included) is still ahead: steps an outage passed are not made up. */
function nextStep (fromMs: number, from: number, ctx: MachineContext): { step: number, nextLookupAtMs: number | null } {
  for (let step = from; step < ctx.scheduleMs.length; step++) {
    const at = fromMs + Math.round((ctx.scheduleMs[step] as number) * (1 + JITTER * ctx.random))
    if (at > ctx.nowMs) return { step, nextLookupAtMs: at }
  }
  return { step: ctx.scheduleMs.length, nextLookupAtMs: null }
}

/** When a record that cannot be looked up (or has no transaction id) goes stale: the schedule's last time. */
export function staleAtMs (r: PaymentRecord, ctx: Pick<MachineContext, 'scheduleMs'>): number {
  return r.scheduleFromMs + (ctx.scheduleMs[ctx.scheduleMs.length - 1] ?? 0)
}

/** A look-up an event asked for is due from when it asked; any other wanted now (a recheck) at once. */
function askedAt (r: PaymentRecord): number {
  return isEventAsked(r) ? (r.eventLookup as { atMs: number }).atMs : 0
}

/**
 * The look-up wanted now is the one an event asked for in this step (SPEC §12: such look-ups get at most half the
 * rate).
 */
export function isEventAsked (r: PaymentRecord): boolean {
  return r.lookupNow && r.eventLookup !== null && r.eventLookup.step === r.step
}

/** What the worker does with a record whose time has come. */
export type DueWork = 'notify' | 'lookup' | 'time'

export function dueWork (r: PaymentRecord, ctx: MachineContext): DueWork {
  if (r.state === 'unverified') return r.unverified?.vouched === 'transaction' && ctx.canLookUp(r) ? 'lookup' : 'time'
  if (r.notify.length > 0) return 'notify'
  if ((r.state === 'pending' || r.state === 'stale') && ctx.canLookUp(r) && (r.lookupNow || (r.nextLookupAtMs !== null && r.nextLookupAtMs <= ctx.nowMs))) return 'lookup'
  return 'time'
}

/** The time the worker must act next, by the same conditions `dueWork` and `timed` judge. */
function withDue (r: PaymentRecord, ctx: MachineContext): PaymentRecord {
  return { ...r, dueAtMs: dueAt(r, ctx) }
}

function dueAt (r: PaymentRecord, ctx: MachineContext): number | null {
  if (r.notify.length > 0) return 0
  switch (r.state) {
    case 'sending': return r.sentAtMs + ctx.inFlightMs
    case 'unknown': return staleAtMs(r, ctx)
    case 'pending':
      if (!ctx.canLookUp(r)) return staleAtMs(r, ctx)
      return r.lookupNow ? Math.min(askedAt(r), r.nextLookupAtMs ?? Number.POSITIVE_INFINITY) : r.nextLookupAtMs ?? 0
    case 'stale': return r.lookupNow && ctx.canLookUp(r) ? askedAt(r) : null
    default: return null
  }
}
