/**
 * The transaction reference of a held request body: a non-empty string at the configured JSON
 * Pointer (`PROXY_IDEMPOTENCY_KEY_POINTER`, default `/externalReference`). Three places ask the same
 * question and must get the same answer: whether a 401 may be retried (SPEC §5), whether a caller
 * sent the reference it must send (§7), and which record a transaction is keyed by (§8).
 */
import type { HeldJson } from './held-json.js'
import { readPointer } from './strict-json.js'

export type ReferenceRead =
  | { kind: 'found', reference: string }
  /** No body, not JSON, compressed, nothing at the pointer, or not a non-empty string there. */
  | { kind: 'none' }
  /** A member name on the way to the reference is repeated: the provider might read the other one. */
  | { kind: 'ambiguous' }

const NONE: ReferenceRead = { kind: 'none' }

export function readReference (body: HeldJson | null, contentEncoding: string | string[] | undefined, pointer: string): ReferenceRead {
  // A compressed body is not read (SPEC §8): the provider reads the decoded one, which we cannot judge.
  if (body === null || isContentEncoded(contentEncoding)) return NONE
  const parsed = body.read()
  if (!parsed.ok) return NONE
  const read = readPointer(parsed.value, pointer)
  if (read.kind === 'ambiguous') return read
  if (read.kind === 'missing' || typeof read.value !== 'string' || read.value === '') return NONE
  return { kind: 'found', reference: read.value }
}

/** Whether a Content-Encoding names any coding other than `identity`. */
export function isContentEncoded (value: string | string[] | undefined): boolean {
  if (value === undefined) return false
  for (const coding of (Array.isArray(value) ? value.join(',') : value).split(',')) {
    const name = coding.trim().toLowerCase()
    if (name !== '' && name !== 'identity') return true
  }
  return false
}
