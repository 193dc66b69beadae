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

export function readReference (
  body: HeldJson | null,
  contentEncoding: string | string[] | undefined,
  pointer: string,
): ReferenceRead {
  // A compressed body is not read (SPEC §8): the provider reads the decoded one, which we cannot judge.
  if (body === null || isContentEncoded(contentEncoding)) return NONE
  if (lacksFirstName(body.bytes, pointer)) return NONE
  return readReferenceInFull(body, pointer)
}

/** The strict reading itself, which lacksFirstName must always agree with (a property test holds it to that). */
export function readReferenceInFull (body: HeldJson, pointer: string): ReferenceRead {
  const parsed = body.read()
  if (!parsed.ok) return NONE
  const read = readPointer(parsed.value, pointer)
  if (read.kind === 'ambiguous') return read
  if (read.kind === 'missing' || typeof read.value !== 'string' || read.value === '') return NONE
  return { kind: 'found', reference: read.value }
}

const BACKSLASH = 0x5c
const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/
const firstNames = new Map<string, Buffer | null>()

/**
 * Whether the body cannot hold the pointer's first member name, so that no reading of it, ours or
 * the provider's, finds anything at the pointer: a POST without a reference is then spared the
 * strict reading, about 2 µs of a 2 KiB body (docs/performance.md, issue 46). Without a backslash
 * in the body no string in it is escaped, so a member with that name would appear as the name's own
 * UTF-8 bytes between quotes. An ambiguous reading needs a repeated name on the way, the first one
 * included, so it is not missed either. A first segment that could be an array index is never
 * judged this way.
 */
function lacksFirstName (bytes: Buffer, pointer: string): boolean {
  let needle = firstNames.get(pointer)
  if (needle === undefined) {
    needle = quotedFirstName(pointer)
    firstNames.set(pointer, needle)
  }
  return needle !== null && !bytes.includes(BACKSLASH) && !bytes.includes(needle)
}

function quotedFirstName (pointer: string): Buffer | null {
  if (!pointer.startsWith('/')) return null
  const name = pointer.slice(1).split('/')[0]!.replace(/~1/g, '/').replace(/~0/g, '~')
  const quoted = JSON.stringify(name)
  return ARRAY_INDEX.test(name) || quoted.includes('\\') ? null : Buffer.from(quoted)
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
