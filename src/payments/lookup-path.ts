/**
 * A payment's look-up path (SPEC §12): PROXY_PAYMENTS_LOOKUP_PATH (fiat) or _CRYPTO_LOOKUP_PATH with
 * `{transactionId}` and `{externalReference}` filled in. A value is one path segment whatever it
 * holds: everything but `A-Z a-z 0-9 - _` is percent-encoded, dots included, so an id such as `..`
 * or `a/b` sent by the provider (or named in an event) can never lead the request off its base.
 * Pure.
 */
import type { PaymentRecord } from './payment-record.js'

export type LookupPaths = Readonly<Record<string, string | null>>

export function segmentOf (value: string): string {
  return Array.from(Buffer.from(value, 'utf8'), (byte) => {
    const c = String.fromCharCode(byte)
    return /[A-Za-z0-9_-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }).join('')
}

/** The path below the interface base, or null when the interface has none or a value it needs is unknown. */
export function lookupPathOf (paths: LookupPaths, record: Pick<PaymentRecord, 'interface' | 'transactionId' | 'externalReference'>): string | null {
  const template = paths[record.interface] ?? null
  if (template === null) return null
  if (template.includes('{transactionId}') && record.transactionId === null) return null
  return template
    .replaceAll('{transactionId}', segmentOf(record.transactionId ?? ''))
    .replaceAll('{externalReference}', segmentOf(record.externalReference))
}
