/**
 * The one hook through which a send is followed (SPEC §12), for the proxy's requests
 * (payment-follow-plugin.ts) and for approved requests the approvals forwarder sends (§11): before
 * the send, `intent` stores the record (`sending`) or joins the one its reference's §8 key already
 * has, and rejects when it cannot be written, so that nothing is sent unrecorded; after it,
 * `answered` applies the provider's answer, read once by `read`. Amount and currency are read from
 * the request as §7 reads them; unreadable ones are stored as null, never a refusal.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { compilePathRule } from '../callers/path-rules.js'
import type { Clock } from '../clock.js'
import type { PaymentsConfig } from '../config/payment-config.js'
import { StateUnavailableError } from '../errors.js'
import type { HeldJson } from '../json/held-json.js'
import { readPointer } from '../json/strict-json.js'
import type { CanonicalPath } from '../routing/canonical-path.js'
import type { ContextFor } from './payment-context.js'
import { initial, type ProviderAnswer } from './payment-machine.js'
import { untouched, type CountedAmount, type PaymentRecord } from './payment-record.js'
import { newPaymentId } from '../objects/payment-id.js'
import type { PaymentStore } from './payment-store.js'
import type { ApplyInput } from './payment-updater.js'
import { readAnswer } from './provider-reading.js'

/** SPEC §7: a JSON number or string of this form; no sign, exponent, spaces or separators. */
const PLAIN_DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/

export interface SendFacts {
  /** The reference's §8 record key: a later forward of the same reference joins the record. */
  key: string
  caller: string
  environment: string
  interface: string
  method: string
  /** Canonical, below the interface base, as sent. */
  path: string
  /** Folded for comparisons (SPEC §3): what PROXY_PAYMENTS_PATHS judges. */
  folded: CanonicalPath
  reference: string
  body: HeldJson
  /** The id a new record is to have (SPEC §16's check planned it); a new one when absent. */
  id?: string | undefined
  /** What the forward counted against day totals (SPEC §7), given back once if the payment fails. */
  counted?: readonly CountedAmount[] | undefined
}

export interface FollowedSend {
  id: string
  /** A new record: no earlier forward of the reference left one (so a 4xx or an answer without an id drops it). */
  fresh: boolean
  /** As stored by the intent: the answer's update starts from it, without reading it again. */
  record: PaymentRecord
}

export interface PaymentFollower {
  follows: (method: string, folded: CanonicalPath) => boolean
  /** Rejects with StateUnavailableError when the intent cannot be stored: then nothing may be sent. */
  intent: (facts: SendFacts) => Promise<FollowedSend>
  read: (status: number, body: Buffer | null, contentEncoding: string | string[] | undefined) => ProviderAnswer
  /** Never rejects: a store that fails is logged, and the record is `unknown` once no forward can be in flight. */
  answered: (sent: FollowedSend, answer: ProviderAnswer) => Promise<void>
}

export interface FollowerDeps {
  config: PaymentsConfig
  store: PaymentStore
  apply: ApplyInput
  context: ContextFor
  clock: Clock
  log: Logger
  /** This process, so a restart on a store it owned alone knows its `sending` records are orphans. */
  sender: string
}

export function newSender (): string {
  return randomUUID()
}

export function createPaymentFollower (deps: FollowerDeps): PaymentFollower {
  const { config, store, apply, context, clock, log, sender } = deps
  const followed = compilePathRule([...config.paths])

  return {
    follows: (method, folded) => method === 'POST' && followed(folded),
    async intent (facts) {
      const nowMs = clock.wallMs()
      const text = facts.body.read('text')
      const at = (pointer: string): string | null => {
        if (!text.ok) return null
        const read = readPointer(text.value, pointer)
        return read.kind === 'found' && typeof read.value === 'string' && read.value !== '' ? read.value : null
      }
      const amount = at(config.amountPointer)
      const record = initial({
        id: facts.id ?? newPaymentId(),
        key: facts.key,
        version: 1,
        state: 'sending',
        providerStatus: null,
        caller: facts.caller,
        environment: facts.environment,
        interface: facts.interface,
        method: facts.method,
        path: facts.path,
        externalReference: facts.reference,
        transactionId: null,
        transactionIdFrom: null,
        amount: amount !== null && PLAIN_DECIMAL.test(amount) ? amount : null,
        currency: at(config.currencyPointer),
        ...(facts.counted === undefined || facts.counted.length === 0
          ? {}
          : { counted: facts.counted.map((c) => ({ key: c.key, units: c.units })) }),
        createdAtMs: nowMs,
        sender,
        ...untouched(nowMs),
      }, context(nowMs))
      try {
        const outcome = await store.create(record)
        if (outcome.kind === 'created') {
          log.info({ payment: record.id, caller: record.caller, reference: record.externalReference, amount: record.amount, currency: record.currency }, 'payment intent stored before forwarding')
          return { id: record.id, fresh: true, record }
        }
        // Its answer could not be recorded on a record nothing believes: the forward would go unfollowed.
        if (outcome.record.state === 'unverified') throw new Error(`payment ${outcome.record.id} of this reference failed verification`)
        const joined = await apply(outcome.record, { kind: 'rejoin', sender })
        return { id: outcome.record.id, fresh: false, record: joined.record ?? outcome.record }
      } catch (err) {
        throw new StateUnavailableError(err)
      }
    },
    read: (status, body, contentEncoding) => readAnswer(status, body, contentEncoding, config),
    async answered (sent, answer) {
      try {
        await apply(sent.record, { kind: 'answer', answer })
      } catch (err) {
        log.error({ payment: sent.id, caller: sent.record.caller, reference: sent.record.externalReference, answer: answer.kind, transactionId: answer.kind === 'followed' ? answer.transactionId : undefined, err }, 'payment answer not recorded: the store is unavailable; the payment becomes unknown')
      }
    },
  }
}
