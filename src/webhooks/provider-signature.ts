/**
 * The provider's signature (SPEC §10). `header-secret` is the provider's documented scheme: the
 * dashboard's secret itself in the header. `hmac` is for a provider that signs the raw body. Both
 * compare in constant time; the header is never stored or passed on (stored-headers.ts).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import type { ProviderVerification } from '../config/webhook-config.js'

/** Pure: whether `headerValue` is a right signature of `body`. */
export function isValidSignature (
  verify: ProviderVerification,
  headerValue: string | string[] | undefined,
  body: Buffer,
): boolean {
  if (typeof headerValue !== 'string') return false
  if (verify.scheme === 'header-secret') return sameText(headerValue, verify.secret)
  const mac = createHmac(verify.algorithm, Buffer.from(verify.secret, 'utf8')).update(body).digest(verify.encoding)
  const expected = `${verify.prefix}${mac}`
  // hex is case-insensitive; base64 is not.
  return verify.encoding === 'hex' ? sameText(headerValue.toLowerCase(), expected.toLowerCase()) : sameText(headerValue, expected)
}

function sameText (a: string, b: string): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest()
  return timingSafeEqual(digest(a), digest(b))
}
