/**
 * The body's fingerprint for SPEC §8: SHA-256 of its RFC 8785 canonical JSON, so the same JSON value
 * sent with other member order or spacing replays, and any other value is a reuse. RFC 8785 is
 * JSON.stringify's string and number serialisation with members sorted by UTF-16 code units.
 * A value RFC 8785 cannot represent (a number outside the doubles, such as 1e400) is fingerprinted
 * by its bytes instead, as is a body repeating a member name: never equal to another value's
 * canonical form by accident.
 */
import { createHash } from 'node:crypto'
import type { JsonValue } from '../json/strict-json.js'

/** The canonical JSON text, or null when the value holds a number JSON cannot carry (RFC 8785 §3.2.2.3). */
export function canonicalJson (value: JsonValue): string | null {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : null
  if (Array.isArray(value)) {
    const items: string[] = []
    for (const item of value) {
      const text = canonicalJson(item)
      if (text === null) return null
      items.push(text)
    }
    return `[${items.join(',')}]`
  }
  const members: string[] = []
  // The default sort compares UTF-16 code units, as RFC 8785 §3.2.3 asks.
  for (const name of Object.keys(value).sort()) {
    const text = canonicalJson(value[name] as JsonValue)
    if (text === null) return null
    members.push(`${JSON.stringify(name)}:${text}`)
  }
  return `{${members.join(',')}}`
}

/** `value` null: a body RFC 8785 does not cover (a repeated member name: I-JSON forbids it), by its bytes. */
export function fingerprintOf (value: JsonValue | null, raw: Buffer): string {
  const canonical = value === null ? null : canonicalJson(value)
  const hash = createHash('sha256')
  if (canonical === null) hash.update('raw:').update(raw)
  else hash.update('jcs:').update(canonical)
  return hash.digest('hex')
}
