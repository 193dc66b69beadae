/**
 * A payment's look-up path (SPEC §12): PROXY_PAYMENTS_LOOKUP_PATH (fiat) or _CRYPTO_LOOKUP_PATH with
 * `{transactionId}` and `{externalReference}` filled in. A value is one path segment whatever it
 * holds: everything but RFC 3986's unreserved characters is percent-encoded (`/`, `%`, `?`, `#`,
 * `\`), and a value that is all dots (`.`, `..`) is not looked up at all, since servers resolve a dot
 * segment however it is spelled (`%2E%2E` included). So an id the provider sent, or an event named,
 * can never lead the request off its base. Pure.
 */
import type { PaymentRecord } from './payment-record.js'

export type LookupPaths = Readonly<Record<string, string | null>>

const UNRESERVED = /[A-Za-z0-9._~-]/

/** The value as one path segment, or null when it cannot be one. */
export function segmentOf (value: string): string | null {
  if (value === '' || /^\.+$/.test(value)) return null
  return Array.from(Buffer.from(value, 'utf8'), (byte) => {
    const c = String.fromCharCode(byte)
    return UNRESERVED.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }).join('')
}

/**
 * The path below the interface base, or null when the interface has none or a value it needs is unknown or unusable.
 */
export function lookupPathOf (paths: LookupPaths, record: Pick<PaymentRecord, 'interface' | 'transactionId' | 'externalReference'>): string | null {
  const template = paths[record.interface] ?? null
  if (template === null) return null
  const values: Record<string, string | null> = {
    '{transactionId}': record.transactionId === null ? null : segmentOf(record.transactionId),
    '{externalReference}': segmentOf(record.externalReference),
  }
  let path = template
  for (const [placeholder, value] of Object.entries(values)) {
    if (!path.includes(placeholder)) continue
    if (value === null) return null
    path = path.replaceAll(placeholder, value)
  }
  return path
}
