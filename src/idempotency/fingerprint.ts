/**
 * The body's fingerprint for SPEC §8: SHA-256 of its RFC 8785 canonical JSON, so the same JSON value
 * sent with other member order or spacing replays, and any other value is a reuse. RFC 8785 is
 * JSON.stringify's string and number serialisation with members sorted by UTF-16 code units.
 * A value RFC 8785 cannot represent (a number outside the doubles, such as 1e400) is fingerprinted
 * by its bytes instead, as is a body repeating a member name: never equal to another value's
 * canonical form by accident.
 */
import { hash } from 'node:crypto'
import type { HeldJson } from '../json/held-json.js'
import type { JsonValue } from '../json/strict-json.js'

/** The canonical JSON text, or null when the value holds a number JSON cannot carry (RFC 8785 §3.2.2.3). */
export function canonicalJson (value: JsonValue): string | null {
  return writeCanonical(value, false)
}

const RAW_PREFIX = Buffer.from('raw:')
const BACKSLASH = 0x5c

export function fingerprintOf (body: HeldJson): string {
  const read = body.read()
  // The reader decodes UTF-8 fatally, so its strings are well formed; a backslash is a native search.
  const canonical = read.ok && !read.hasDuplicates ? writeCanonical(read.value, !body.bytes.includes(BACKSLASH)) : null
  // One-shot hash(): no Hash object per request.
  return canonical === null ? hash('sha256', Buffer.concat([RAW_PREFIX, body.bytes])) : hash('sha256', `jcs:${canonical}`)
}

/**
 * One string built by concatenation (V8 joins it as a rope and flattens it once, when hashed), and
 * member names sorted only when the body did not send them sorted.
 *
 * `plainStrings`: the value was read from well-formed UTF-8 with no backslash in it, so none of its
 * strings holds a character JSON escapes (a quote, a backslash, a control character, a lone
 * surrogate) and each one's JSON text is itself in quotes, with no scan of its characters. Only
 * fingerprintOf can know that, from the bytes it holds with their reading.
 */
function writeCanonical (value: JsonValue, plainStrings: boolean): string | null {
  switch (typeof value) {
    case 'string': return plainStrings ? `"${value}"` : JSON.stringify(value)
    case 'number': return Number.isFinite(value) ? JSON.stringify(value) : null
    case 'boolean': return value ? 'true' : 'false'
  }
  if (value === null) return 'null'
  if (Array.isArray(value)) {
    let out = '['
    for (let i = 0; i < value.length; i++) {
      const text = writeCanonical(value[i] as JsonValue, plainStrings)
      if (text === null) return null
      out += i === 0 ? text : `,${text}`
    }
    return `${out}]`
  }
  const names = Object.keys(value)
  // The default sort compares UTF-16 code units, as RFC 8785 §3.2.3 asks; so does `>`.
  for (let i = 1; i < names.length; i++) {
    if ((names[i - 1] as string) > (names[i] as string)) {
      names.sort()
      break
    }
  }
  let out = '{'
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string
    const text = writeCanonical(value[name] as JsonValue, plainStrings)
    if (text === null) return null
    out += `${i === 0 ? '' : ','}${plainStrings ? `"${name}"` : JSON.stringify(name)}:${text}`
  }
  return `${out}}`
}
