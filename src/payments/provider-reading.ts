/**
 * What the provider said, read once at the edge (SPEC §12): the answer to a followed forward, a
 * look-up's answer, an event. Bodies are read as strict JSON (json/strict-json.ts): a member name
 * repeated on the way to a pointer is ambiguous (two parsers could read two values), so such an id
 * or status is never used. A transaction id is a non-empty string or an integer (its decimal text),
 * as the inbox reads event ids; statuses are text, compared without letter case. Pure.
 */
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib'
import { parseStrictJsonBytes, readPointer, type JsonValue } from '../json/strict-json.js'
import type { LookupResult, ProviderAnswer, StatusClass } from './payment-machine.js'
import type { PaymentRecord } from './payment-record.js'

/** A provider's answer about one transaction is small JSON; anything larger is not read. */
export const MAX_PROVIDER_BODY_BYTES = 256 * 1024

export interface ReadingSettings {
  transactionIdPointer: string
  statusPointer: string
  /** Lower case. */
  succeededStatuses: readonly string[]
  failedStatuses: readonly string[]
  eventTransactionIdPointer: string
  eventReferencePointer: string
}

export function classifyStatus (status: string | null, settings: Pick<ReadingSettings, 'succeededStatuses' | 'failedStatuses'>): StatusClass {
  if (status === null) return 'pending'
  const lower = status.toLowerCase()
  if (settings.succeededStatuses.includes(lower)) return 'succeeded'
  if (settings.failedStatuses.includes(lower)) return 'failed'
  return 'pending'
}

type Read<T> = { kind: 'found', value: T } | { kind: 'missing' } | { kind: 'ambiguous' } | { kind: 'invalid' }

function idAt (json: JsonValue, pointer: string): Read<string> {
  const read = readPointer(json, pointer)
  if (read.kind !== 'found') return read
  const value = read.value
  if (typeof value === 'string' && value !== '') return { kind: 'found', value }
  // An integer's decimal text (JSON's own spelling of it).
  if (Number.isSafeInteger(value)) return { kind: 'found', value: JSON.stringify(value) }
  return { kind: 'invalid' }
}

function textAt (json: JsonValue, pointer: string): Read<string> {
  const read = readPointer(json, pointer)
  if (read.kind !== 'found') return read
  return typeof read.value === 'string' ? { kind: 'found', value: read.value } : { kind: 'invalid' }
}

const DECODERS: Readonly<Record<string, (body: Buffer) => Buffer>> = {
  '': (body) => body,
  identity: (body) => body,
  gzip: (body) => gunzipSync(body, { maxOutputLength: MAX_PROVIDER_BODY_BYTES }),
  'x-gzip': (body) => gunzipSync(body, { maxOutputLength: MAX_PROVIDER_BODY_BYTES }),
  deflate: (body) => inflateSync(body, { maxOutputLength: MAX_PROVIDER_BODY_BYTES }),
  br: (body) => brotliDecompressSync(body, { maxOutputLength: MAX_PROVIDER_BODY_BYTES }),
}

/**
 * The body as sent, decoded when the provider compressed it (one coding); null when it cannot be read within the bound.
 */
export function decodedBody (body: Buffer, contentEncoding: string | string[] | undefined): Buffer | null {
  if (body.length > MAX_PROVIDER_BODY_BYTES) return null
  const coding = (Array.isArray(contentEncoding) ? contentEncoding.join(',') : contentEncoding ?? '').trim().toLowerCase()
  const decode = Object.hasOwn(DECODERS, coding) ? DECODERS[coding] : undefined
  if (decode === undefined) return null
  try {
    return decode(body)
  } catch {
    return null
  }
}

function json (body: Buffer | null, contentEncoding: string | string[] | undefined): JsonValue | null {
  const bytes = body === null ? null : decodedBody(body, contentEncoding)
  if (bytes === null) return null
  const parsed = parseStrictJsonBytes(bytes)
  return parsed.ok ? parsed.value : null
}

/**
 * The answer to a followed forward: 2xx with or without a usable transaction id, 4xx, or anything that leaves it open.
 */
export function readAnswer (
  status: number,
  body: Buffer | null,
  contentEncoding: string | string[] | undefined,
  settings: ReadingSettings,
): ProviderAnswer {
  if (status >= 400 && status < 500) return { kind: 'refused', status }
  if (status < 200 || status >= 300) return { kind: 'lost' }
  const value = json(body, contentEncoding)
  if (value === null) return { kind: 'untracked', reason: 'the answer is not JSON (or too large to read)' }
  const id = idAt(value, settings.transactionIdPointer)
  if (id.kind === 'ambiguous') return { kind: 'untracked', reason: `a member name is repeated on the way to ${settings.transactionIdPointer}` }
  if (id.kind === 'invalid') return { kind: 'untracked', reason: `the value at ${settings.transactionIdPointer} is not a non-empty string or an integer` }
  if (id.kind === 'missing') return { kind: 'untracked', reason: `no transaction id at ${settings.transactionIdPointer}` }
  const text = textAt(value, settings.statusPointer)
  return { kind: 'followed', transactionId: id.value, providerStatus: text.kind === 'found' ? text.value : null }
}

/**
 * A look-up's answer about `record`: final, pending, or a failed look-up. It must be about this
 * payment: an answer that names another transaction or another reference fails, and so does one
 * that names no reference when the transaction id came from an event (which anyone holding the
 * provider's static secret can send: it might name someone else's successful transaction).
 */
export function readLookup (status: number, body: Buffer | null, contentEncoding: string | string[] | undefined, record: Pick<PaymentRecord, 'transactionId' | 'transactionIdFrom' | 'externalReference'>, settings: ReadingSettings): LookupResult {
  if (status < 200 || status >= 300) return { kind: 'failed', reason: `HTTP ${status}` }
  const value = json(body, contentEncoding)
  if (value === null) return { kind: 'failed', reason: 'the answer is not JSON (or too large to read)' }
  const id = idAt(value, settings.transactionIdPointer)
  if (id.kind === 'ambiguous' || id.kind === 'invalid' || (id.kind === 'found' && record.transactionId !== null && id.value !== record.transactionId)) {
    return { kind: 'failed', reason: `the answer names another transaction at ${settings.transactionIdPointer}` }
  }
  const reference = textAt(value, settings.eventReferencePointer)
  if (reference.kind === 'ambiguous' || reference.kind === 'invalid' || (reference.kind === 'found' && reference.value !== record.externalReference)) {
    return { kind: 'failed', reason: `the answer names another reference at ${settings.eventReferencePointer}` }
  }
  if (reference.kind === 'missing' && record.transactionIdFrom === 'event') {
    return { kind: 'failed', reason: `the transaction id came from an event and the answer names no reference at ${settings.eventReferencePointer}` }
  }
  const text = textAt(value, settings.statusPointer)
  if (text.kind !== 'found') return { kind: 'failed', reason: `no status text at ${settings.statusPointer}` }
  const cls = classifyStatus(text.value, settings)
  return cls === 'pending' ? { kind: 'pending', status: text.value } : { kind: 'final', state: cls, status: text.value }
}

export type EventReading =
  | { kind: 'read', transactionId: string | null, reference: string | null, status: string | null }
  /** Not JSON, or a member name repeated on the way to an id: never matched (a reader could see another payment). */
  | { kind: 'unreadable', reason: string }

export function readEvent (body: Buffer, settings: ReadingSettings): EventReading {
  const value = json(body, undefined)
  if (value === null) return { kind: 'unreadable', reason: 'not JSON' }
  const id = idAt(value, settings.eventTransactionIdPointer)
  const reference = textAt(value, settings.eventReferencePointer)
  if (id.kind === 'ambiguous' || reference.kind === 'ambiguous') return { kind: 'unreadable', reason: 'a member name is repeated on the way to the transaction id or the reference' }
  const status = textAt(value, settings.statusPointer)
  return {
    kind: 'read',
    transactionId: id.kind === 'found' ? id.value : null,
    reference: reference.kind === 'found' && reference.value !== '' ? reference.value : null,
    status: status.kind === 'found' ? status.value : null,
  }
}
