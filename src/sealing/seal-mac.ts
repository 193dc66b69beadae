/**
 * The primitives of every seal (SPEC §11's approval records, §12's payment records): a key derived
 * from the sealing secret under a label of its own, so one secret keys each kind of record apart
 * and no seal of one kind verifies as another's; a seal, an HMAC-SHA256 over a JSON array of the
 * covered values in a fixed order (each array starts with its stage's label, so no value of one
 * stage can be read as another's); and a constant-time comparison.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

export type SealKey = Buffer

/** `whsec_<base64>`, as `webhook-secrets` prints it; the bytes after the prefix are the key material. */
export function deriveSealKey (sealingSecret: string, label: string): SealKey {
  const bytes = Buffer.from(sealingSecret.replace(/^whsec_/, ''), 'base64')
  return createHmac('sha256', bytes).update(label).digest()
}

export function seal (key: SealKey, covered: readonly unknown[]): string {
  return createHmac('sha256', key).update(JSON.stringify(covered)).digest('base64url')
}

/** Whether `given` is the seal `expected`; anything that is not a string is not. */
export function sameSeal (expected: string, given: unknown): boolean {
  if (typeof given !== 'string') return false
  const a = Buffer.from(expected)
  const b = Buffer.from(given)
  return a.length === b.length && timingSafeEqual(a, b)
}
