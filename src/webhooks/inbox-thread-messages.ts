/**
 * What the inbox's thread (inbox-thread-program.ts) and the sidecar's main thread (inbox-thread.ts)
 * say to each other. Every message is structured-cloned: a Buffer arrives as a Uint8Array, an error
 * as its message and code (threads/thread-calls.ts).
 */
import type { DeliveryOutcomeLabel } from '../outbox/deliverer.js'
import type { Answer, Failure } from '../threads/thread-calls.js'
import type { HeldKind, InboxObserver, IntakeOutcomeLabel } from './inbox-metrics.js'

/** What the main thread reads of the inbox's store, by name: the console's and payments' reads, and readiness. */
export type StoreRead = 'list' | 'show' | 'replay' | 'stats' | 'eventsAfter' | 'lastEventSeq' | 'readiness'

export interface StoreCall { id: number, call: StoreRead, args: unknown[] }

export type ToInbox =
  | { listen: { host: string, port: number } }
  /** The main thread's store reads of one of its turns. */
  | { calls: StoreCall[] }
  /** An event was replayed (the console): the deliverer looks for due events now. */
  | { wake: true }
  /** The grace period is over: connections still open are closed. */
  | { cut: true }
  | { close: true }

/** One call of the inbox's observer, replayed on the metrics the proxy's /metrics serves. */
export type Observation =
  | ['received', IntakeOutcomeLabel, number | null]
  | ['evicted', number]
  | ['held', HeldKind, number]
  | ['delivery', DeliveryOutcomeLabel, number]
  | ['outOfOrder']
  | ['pass', 'done' | 'failed']

export type FromInbox =
  | { built: true }
  /** `operator`: the failure was an OperatorError (a store that cannot be opened), a sentence for the operator. */
  | { buildFailed: Failure, operator: boolean }
  | { listening: number }
  | { listenFailed: Failure }
  /**
   * What the inbox produced since its last message (at most every 5 ms); any part may be empty. `stored`: at least one
   * new event.
   */
  | { turn: { lines: string, observed: Observation[], stored: boolean, answers: Answer[] } }

/** Replays observations on the metrics they were made for. */
export function replay (observer: InboxObserver, observed: readonly Observation[]): void {
  for (const o of observed) {
    switch (o[0]) {
      case 'received': observer.received(o[1], o[2]); break
      case 'evicted': observer.evicted(o[1]); break
      case 'held': observer.held(o[1], o[2]); break
      case 'delivery': observer.delivery(o[1], o[2]); break
      case 'outOfOrder': observer.outOfOrder(); break
      case 'pass': observer.pass(o[1]); break
    }
  }
}

/** The observer the inbox's thread uses: each call is recorded for its next message. */
export function recordingObserver (record: (o: Observation) => void): InboxObserver {
  return {
    received (outcome, seconds) { record(['received', outcome, seconds]) },
    evicted (events) { record(['evicted', events]) },
    held (kind, seconds) { record(['held', kind, seconds]) },
    delivery (outcome, seconds) { record(['delivery', outcome, seconds]) },
    outOfOrder () { record(['outOfOrder']) },
    pass (outcome) { record(['pass', outcome]) },
  }
}
