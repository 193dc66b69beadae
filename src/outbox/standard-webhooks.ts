/**
 * Standard Webhooks signing (https://www.standardwebhooks.com/, "Signature scheme"): `webhook-signature`
 * is `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed by the base64-decoded bytes after
 * `whsec_`. During a rotation every secret signs, space-separated, and the receiver accepts any one.
 */
import { createHmac, randomBytes } from 'node:crypto'

const PREFIX = 'whsec_'

export function signingKeyOf (secret: string): Buffer {
  return Buffer.from(secret.slice(PREFIX.length), 'base64')
}

export function signatureHeader (keys: readonly Buffer[], id: string, timestampS: number, body: Buffer): string {
  return keys.map((key) => {
    const mac = createHmac('sha256', key).update(`${id}.${timestampS}.`).update(body).digest('base64')
    return `v1,${mac}`
  }).join(' ')
}

/** A fresh secret for `PROXY_WEBHOOK_SIGNING_SECRET`: 32 random bytes. */
export function newSigningSecret (): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`
}
