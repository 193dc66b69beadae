/**
 * Whether a request falls under SPEC §8, and under which record key and fingerprint. Pure: request
 * facts in, a verdict out, table-tested. The body is read as JSON whatever Content-Type claims; a
 * compressed body is not read (the provider would read the decoded one, we cannot judge it).
 */
import { hash } from 'node:crypto'
import { ExternalReferenceRequiredError } from '../errors.js'
import type { HeldJson } from '../json/held-json.js'
import { readReference } from '../json/reference.js'
import { fingerprintOf } from './fingerprint.js'
import type { CanonicalPath } from '../routing/canonical-path.js'

/** The methods whose requests carry a transaction and are keyed by its reference (SPEC §8). */
export const KEYED_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH'])

export interface RequestFacts {
  method: string
  callerId: string
  environment: string
  iface: string
  /** The folded canonical path below the interface base (SPEC §3: case and a trailing slash do not matter). */
  path: CanonicalPath
  contentEncoding: string | string[] | undefined
  /** The held body; null when it streams or there is none. */
  body: HeldJson | null
  keyPointer: string
}

export type IdempotencyDecision =
  | { kind: 'skip' }
  | { kind: 'refuse', error: ExternalReferenceRequiredError }
  | { kind: 'check', key: string, fingerprint: string }

const SKIP: IdempotencyDecision = { kind: 'skip' }

export function decideIdempotency (facts: RequestFacts): IdempotencyDecision {
  if (!KEYED_METHODS.has(facts.method)) return SKIP
  const read = readReference(facts.body, facts.contentEncoding, facts.keyPointer)
  if (read.kind === 'none') return SKIP
  if (read.kind === 'ambiguous') {
    return { kind: 'refuse', error: new ExternalReferenceRequiredError('The body repeats a member name on the way to the idempotency reference (PROXY_IDEMPOTENCY_KEY_POINTER): send it once') }
  }
  // Found, so the body is held JSON, parsed already (HeldJson reads it once).
  const body = facts.body as HeldJson
  return { kind: 'check', key: recordKey(facts, read.reference), fingerprint: fingerprintOf(body) }
}

/** Hashed, so a long reference never makes a long key and the store holds nothing a caller sent. */
export function recordKey (facts: Pick<RequestFacts, 'callerId' | 'environment' | 'iface' | 'method' | 'path'>, reference: string): string {
  return hash('sha256', JSON.stringify([facts.callerId, facts.environment, facts.iface, facts.method, facts.path, reference]))
}


/** SPEC §8: definitive answers are 2xx and 4xx other than 401, 408, 409, 425, 429. */
export function isRecordable (status: number): boolean {
  if (status >= 200 && status < 300) return true
  return status >= 400 && status < 500 && ![401, 408, 409, 425, 429].includes(status)
}

/** Headers set for each answer (by Fastify, the connection, or our request id): a replay gets fresh ones. */
const NOT_REPLAYED = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date', 'x-request-id'])

export function headersToRecord (
  headers: Record<string, string | number | string[] | undefined>,
): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || NOT_REPLAYED.has(name.toLowerCase())) continue
    kept[name.toLowerCase()] = typeof value === 'number' ? String(value) : value
  }
  return kept
}
