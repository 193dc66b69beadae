/**
 * The `amountLimits` decision (SPEC §7) as a pure function over a held body: which amounts a
 * request carries, whether they can be read unambiguously, and whether they fit the per-request
 * limits. Day totals need the store, so the verdict lists what was read; the plugin reserves it.
 *
 * Amounts are compared as integers of AMOUNT_SCALE decimal places (BigInt), never as floats, so
 * "0.1" + "0.2" is exactly "0.3". An amount with more decimals than that is rounded up and a limit
 * rounded down: the rounding can only refuse, never let more through.
 */
import type { HeldJson } from '../json/held-json.js'
import { isContentEncoded } from '../json/reference.js'
import { readPointer } from '../json/strict-json.js'
import type { AmountLimit } from './callers-file.js'
import type { CanonicalPath } from '../routing/canonical-path.js'

/** The methods whose bodies a caller's reference and amount rules read (SPEC §7). */
export const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH'])
export const AMOUNT_SCALE = 8
const PLAIN_DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/
/** The store's bound for totals (state-store.ts). */
const MAX_UNITS = 2n ** 63n - 1n

/** Plain decimal text to units of 10^-AMOUNT_SCALE; null when not a plain decimal. */
export function toUnits (text: string, round: 'up' | 'down'): bigint | null {
  const match = PLAIN_DECIMAL.exec(text)
  if (match === null) return null
  const whole = match[1] ?? '0'
  const fraction = match[2] ?? ''
  const kept = fraction.slice(0, AMOUNT_SCALE).padEnd(AMOUNT_SCALE, '0')
  const dropped = fraction.slice(AMOUNT_SCALE)
  let units = BigInt(whole + kept)
  if (round === 'up' && /[1-9]/.test(dropped)) units += 1n
  return units
}

/** Units back to plain decimal text, without trailing zeros: 150000000n is "1.5". */
export function fromUnits (units: bigint): string {
  const text = units.toString().padStart(AMOUNT_SCALE + 1, '0')
  const whole = text.slice(0, -AMOUNT_SCALE)
  const fraction = text.slice(-AMOUNT_SCALE).replace(/0+$/, '')
  return fraction === '' ? whole : `${whole}.${fraction}`
}

export const DAY_MS = 86_400_000

/** The UTC day a wall-clock time is in, as days since the epoch: what a day's total is kept under. */
export function utcDay (wallMs: number): number {
  return Math.floor(wallMs / DAY_MS)
}

/** The state store's key of a caller's day total for one amountLimits entry and currency. */
export function dayTotalKey (callerId: string, entry: number, currency: string, day: number): string {
  return `day:${callerId}:${entry}:${currency}:${day}`
}

export function limitUnits (text: string): bigint {
  const units = toUnits(text, 'down') ?? 0n
  return units > MAX_UNITS ? MAX_UNITS : units
}

/**
 * What one applicable entry read: the one reading of the request's amount, which the plugin reserves
 * against the day's total and approvals (SPEC §11) judge against `approveAbove`.
 */
export interface ReadAmount {
  /** Index of the amountLimits entry. */
  entry: number
  /** As written in the request (a number's source text, or the string's contents). */
  amount: string
  currency: string
  units: bigint
  /** The entry's day limit for the currency in units; null when it has none. */
  perDay: bigint | null
}

export type AmountVerdict =
  | { kind: 'unreadable', reason: string }
  | { kind: 'exceeded', reason: string }
  | { kind: 'within', amounts: ReadAmount[] }

export interface AmountFacts {
  /** The folded canonical path below the interface base (SPEC §3). */
  path: CanonicalPath
  /** The held body; null when it streams or there is none. */
  body: HeldJson | null
  /** Content-Encoding as sent; a compressed body is not read. */
  contentEncoding: string | string[] | undefined
}

export function judgeAmounts (limits: readonly AmountLimit[], facts: AmountFacts): AmountVerdict {
  const applicable = limits.map((limit, entry) => ({ limit, entry })).filter(
    ({ limit }) => limit.paths === null || limit.paths(facts.path),
  )
  if (applicable.length === 0) return { kind: 'within', amounts: [] }
  if (isContentEncoded(facts.contentEncoding)) return { kind: 'unreadable', reason: 'the body is compressed' }
  if (facts.body === null) return { kind: 'unreadable', reason: 'no body' }
  // Numbers as their source text: `1e400` or `-5` must stay visible, not become Infinity or a float.
  const parsed = facts.body.read('text')
  if (!parsed.ok) return { kind: 'unreadable', reason: 'the body is not JSON' }
  const amounts: ReadAmount[] = []
  for (const { limit, entry } of applicable) {
    const amountRead = readPointer(parsed.value, limit.amount)
    const currencyRead = readPointer(parsed.value, limit.currency)
    if (amountRead.kind === 'ambiguous' || currencyRead.kind === 'ambiguous') return { kind: 'unreadable', reason: 'a member name is repeated on the way to the amount or currency' }
    if (amountRead.kind !== 'found' || typeof amountRead.value !== 'string') return { kind: 'unreadable', reason: 'no amount' }
    if (currencyRead.kind !== 'found' || typeof currencyRead.value !== 'string' || currencyRead.value === '') return { kind: 'unreadable', reason: 'no currency' }
    const units = toUnits(amountRead.value, 'up')
    if (units === null) return { kind: 'unreadable', reason: 'the amount is not a plain decimal' }
    const currency = currencyRead.value
    const perRequest = limit.perRequest.get(currency)
    const perDay = limit.perDay.get(currency)
    if (perRequest === undefined && perDay === undefined) return { kind: 'exceeded', reason: 'the currency is not listed in this caller\'s limits' }
    if (perRequest !== undefined && units > limitUnits(perRequest)) return { kind: 'exceeded', reason: 'the amount is over the per-request limit' }
    amounts.push({
      entry,
      amount: amountRead.value,
      currency,
      units,
      perDay: perDay === undefined ? null : limitUnits(perDay),
    })
  }
  return { kind: 'within', amounts }
}
