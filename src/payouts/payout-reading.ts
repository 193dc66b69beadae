/**
 * SPEC §16's one reading of a payout, for the probable-duplicate check: its amount and currency at
 * §12's pointers and its recipient at the first of PROXY_DUPLICATE_RECIPIENT_POINTERS that holds a
 * non-empty string or a number, and the match key two payouts share when they are the same payout
 * of the same caller, environment and interface. Pure: the check reads the body once through here.
 */
import { createHash } from 'node:crypto'
import { toUnits } from '../callers/amount-limits.js'
import type { HeldJson } from '../json/held-json.js'
import { isContentEncoded } from '../json/reference.js'
import { readPointer, type JsonValue } from '../json/strict-json.js'

export interface PayoutPointers {
  amount: string
  currency: string
  recipients: readonly string[]
}

export interface Payout {
  /** Integer units (callers/amount-limits.ts' scale): `100` and `"100.00"` read the same. */
  units: string
  currency: string
  /** As compared: letter case, spaces and a leading `+` taken away. */
  recipient: string
}

/** Null when the body does not name a payout the check can compare: never a duplicate, and §7 judges the rest. */
export function readPayout (
  body: HeldJson | null,
  contentEncoding: string | string[] | undefined,
  pointers: PayoutPointers,
): Payout | null {
  if (body === null || isContentEncoded(contentEncoding)) return null
  // Numbers as their source text, as §7 reads amounts: 254700000000 is compared digit for digit.
  const parsed = body.read('text')
  if (!parsed.ok) return null
  const text = (pointer: string): string | null => {
    const read = readPointer(parsed.value, pointer)
    return read.kind === 'found' && typeof read.value === 'string' && read.value !== '' ? read.value : null
  }
  const amount = text(pointers.amount)
  const currency = text(pointers.currency)
  if (amount === null || currency === null) return null
  const units = toUnits(amount, 'up')
  if (units === null) return null
  const recipient = firstRecipient(parsed.value, pointers.recipients)
  return recipient === null ? null : { units: units.toString(), currency, recipient }
}

function firstRecipient (root: JsonValue, pointers: readonly string[]): string | null {
  for (const pointer of pointers) {
    const read = readPointer(root, pointer)
    if (read.kind !== 'found' || typeof read.value !== 'string') continue
    const recipient = comparableRecipient(read.value)
    if (recipient !== '') return recipient
  }
  return null
}

/** `+254 700 000 000` and `254700000000` are one recipient, `GB29 NWBK` and `gb29nwbk` too. */
export function comparableRecipient (text: string): string {
  return text.replace(/\s+/gu, '').toLowerCase().replace(/^\+/u, '')
}

export interface PayoutOwner { caller: string, environment: string, interface: string }

/** The key every store indexes a payout by: a hash, so a recipient of any length is a short key and never stored. */
export function matchKey (owner: PayoutOwner, payout: Payout): string {
  return createHash('sha256').update(JSON.stringify([owner.caller, owner.environment, owner.interface, payout.units, payout.currency, payout.recipient])).digest('hex')
}
